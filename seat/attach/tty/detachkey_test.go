package tty_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/attach/tty"
)

type (
	natsConn = nats.Conn
	rawGrant = json.RawMessage
)

var denied = proto.Refuse(proto.CodePermissionDenied, "not yours")

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

func errorWrap(err error) error { return fmt.Errorf("seat shell: %w", err) }

func TestParseDetachKey(t *testing.T) {
	tests := []struct {
		in   string
		want byte
		name string
		bad  bool
	}{
		{in: "", want: 0x1d, name: "Ctrl-]"},
		{in: "ctrl-]", want: 0x1d, name: "Ctrl-]"},
		{in: "^]", want: 0x1d, name: "Ctrl-]"},
		{in: "ctrl-q", want: 0x11, name: "Ctrl-Q"},
		{in: "CTRL-Q", want: 0x11, name: "Ctrl-Q"},
		{in: "^Q", want: 0x11, name: "Ctrl-Q"},
		{in: "^a", want: 0x01, name: "Ctrl-A"},
		{in: "ctrl-@", want: 0x00, name: "Ctrl-@"},
		{in: "ctrl-\\", want: 0x1c, name: "Ctrl-\\"},
		{in: "ctrl-_", want: 0x1f, name: "Ctrl-_"},
		{in: "ctrl-[", bad: true}, // Escape
		{in: "ctrl-m", bad: true}, // Enter
		{in: "ctrl-i", bad: true}, // Tab
		{in: "ctrl-h", bad: true}, // Backspace
		{in: "ctrl-j", bad: true},
		{in: "ctrl-?", bad: true},
		{in: "ctrl-", bad: true},
		{in: "ctrl-qq", bad: true},
		{in: "q", bad: true},
		{in: "alt-q", bad: true},
		{in: "^1", bad: true},
		{in: "ctrl+q", bad: true},
	}
	for _, tt := range tests {
		got, err := tty.ParseDetachKey(tt.in)
		switch {
		case tt.bad && err == nil:
			t.Errorf("%q: accepted as %#x, want an error", tt.in, got)
		case !tt.bad && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case !tt.bad && (got != tt.want || tty.KeyName(got) != tt.name):
			t.Errorf("%q = %#x %s, want %#x %s", tt.in, got, tty.KeyName(got), tt.want, tt.name)
		}
	}
}
