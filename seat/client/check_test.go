package client_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/client"
)

// TestChecksRefuseBeforeAnythingIsSent: each check refuses what its
// manager command would, saying what is wrong, and passes what it takes.
func TestChecksRefuseBeforeAnythingIsSent(t *testing.T) {
	long := strings.Repeat("é", client.MaxInput+1)
	keys := make([]string, client.MaxKeys+1)
	for _, tc := range []struct {
		name string
		err  error
		want string // "" passes
	}{
		{"a token name", client.SpawnArgs{Name: "w_1"}.CheckName(), ""},
		{"no name", client.SpawnArgs{}.CheckName(), ""},
		{"a name with a dot", client.SpawnArgs{Name: "a.b"}.CheckName(), `--name "a.b": a seat's name is one token`},
		{"every 50ms", client.CheckFollowEvery(50 * time.Millisecond), ""},
		{"every 10ms", client.CheckFollowEvery(10 * time.Millisecond), "--interval 10ms: at least 50ms"},
		{"text", client.CheckTyped("hi", nil, false, true), ""},
		{"no text", client.CheckTyped("", nil, false, true), "text: 0 characters; input takes 1 to 65536"},
		{"text too long", client.CheckTyped(long, nil, false, false), "text: 65537 characters"},
		{"keys", client.CheckTyped("Escape", []string{"Escape"}, true, true), ""},
		{"keys without enter", client.CheckTyped("Escape", []string{"Escape"}, true, false), "--no-enter has no meaning with --keys"},
		{"too many keys", client.CheckTyped("", keys, true, true), "257 keys: --keys takes at most 256"},
	} {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("%s: refused: %v", tc.name, tc.err)
		case tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want)):
			t.Errorf("%s: %v, want it to say %q", tc.name, tc.err, tc.want)
		}
	}
}

func TestAnswerMessage(t *testing.T) {
	if m, err := client.AnswerMessage(client.AnswerDeny, []string{"not", "now"}); err != nil || m != "not now" {
		t.Fatalf("deny's reason: %q, %v", m, err)
	}
	if m, err := client.AnswerMessage(client.AnswerAllow, nil); err != nil || m != "" {
		t.Fatalf("a bare approve: %q, %v", m, err)
	}
	if _, err := client.AnswerMessage(client.AnswerAllow, []string{"why"}); err == nil || !strings.Contains(err.Error(), "a reason goes with deny") {
		t.Fatalf("approve with a reason: %v", err)
	}
	if _, err := client.AnswerMessage(client.AnswerDeny, []string{strings.Repeat("x", client.MaxAnswerMessage+1)}); err == nil ||
		!strings.Contains(err.Error(), "the reason is 2001 bytes; at most 2000") {
		t.Fatalf("a reason too long: %v", err)
	}
}

// TestRefusedSpawnSaysWhetherItIsTheInput: a refusal of what was asked is
// the person's input, a failure after the manager ran is not, one whose
// outcome is unknown says it cannot be told, and an error that is no
// refusal comes back as it is.
func TestRefusedSpawnSaysWhetherItIsTheInput(t *testing.T) {
	unknown := &proto.Error{Code: proto.CodeInternal, Message: "lost"}
	plain := errors.New("no connection")
	for _, tc := range []struct {
		err   error
		want  string
		input bool
	}{
		{fmt.Errorf("call: %w", proto.Refuse(proto.CodeNotFound, "no persona x.")), "cannot spawn x: no persona x; nothing was started", true},
		{proto.Refuse(proto.CodeAlreadyExists, "w1 is taken"), "cannot spawn x: w1 is taken; nothing was started", true},
		{proto.Failed(proto.CodeInternal, "pty failed"), "cannot spawn x: pty failed; nothing was started", false},
		{unknown, "cannot tell whether x was spawned: lost; see `cotal ps`", false},
	} {
		err := client.RefusedSpawn("x", tc.err)
		var r *client.SpawnRefusal
		if !errors.As(err, &r) || err.Error() != tc.want || r.Input != tc.input {
			t.Errorf("RefusedSpawn(%v) = %v (input %v), want %q (input %v)", tc.err, err, r != nil && r.Input, tc.want, tc.input)
		}
	}
	if err := client.RefusedSpawn("x", plain); err != plain {
		t.Errorf("RefusedSpawn of a plain error: %v", err)
	}
	if err := client.RefusedSpawn("x", nil); err != nil {
		t.Errorf("RefusedSpawn(nil) = %v", err)
	}
}
