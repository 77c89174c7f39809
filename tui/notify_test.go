package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/presence"
)

func TestPickNotify(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/notify-send", nil }
	missing := func(string) (string, error) { return "", errors.New("not found") }
	tests := []struct {
		name string
		env  map[string]string
		look func(string) (string, error)
		want NotifyVia
		err  bool
	}{
		{"iterm", map[string]string{"TERM_PROGRAM": "iTerm.app"}, found, NotifyOSC9, false},
		{"kitty", map[string]string{"TERM": "xterm-kitty"}, found, NotifyOSC9, false},
		{"ghostty", map[string]string{"TERM_PROGRAM": "ghostty"}, found, NotifyOSC777, false},
		{"foot", map[string]string{"TERM": "foot"}, missing, NotifyOSC777, false},
		{"xterm with a desktop", map[string]string{"TERM": "xterm-256color", "DISPLAY": ":0"}, found, NotifySend, false},
		{"xterm without a desktop", map[string]string{"TERM": "xterm-256color"}, found, NotifyOff, false},
		{"xterm without notify-send", map[string]string{"TERM": "xterm-256color", "DISPLAY": ":0"}, missing, NotifyOff, false},
		{"tmux hides the terminal", map[string]string{"TERM_PROGRAM": "iTerm.app", "TMUX": "/tmp/t,1,0", "WAYLAND_DISPLAY": "w"}, found, NotifySend, false},
		{"off", map[string]string{"TERM_PROGRAM": "iTerm.app", NotifyEnv: "off"}, found, NotifyOff, false},
		{"forced osc9", map[string]string{"TMUX": "x", NotifyEnv: "osc9"}, missing, NotifyOSC9, false},
		{"forced notify-send, missing", map[string]string{NotifyEnv: "notify-send"}, missing, NotifyOff, true},
		{"a typo", map[string]string{NotifyEnv: "osc99"}, found, NotifyOff, true},
	}
	for _, tt := range tests {
		n, err := PickNotify(func(k string) string { return tt.env[k] }, tt.look)
		if n.Via != tt.want || (err != nil) != tt.err {
			t.Errorf("%s: %v, %v; want %v (error %v)", tt.name, n.Via, err, tt.want, tt.err)
		}
	}
}

// The escapes carry one line of inert text (controls shown as visible
// escapes), so a name or an activity can neither end the escape nor start
// another, and they are written after
// the frame they were raised in, never inside it.
func TestNotificationEscapesFollowTheFrame(t *testing.T) {
	evil := "bob\x1b]52;c;bad\a\nsteals; the clipboard"
	if got, want := string(Notify{Via: NotifyOSC9}.escape("cotal · dev", evil)), "\x1b]9;cotal · dev: bob\\x1b]52;c;bad\\a steals; the clipboard\a"; got != want {
		t.Errorf("OSC 9 %q, want %q", got, want)
	}
	if got, want := string(Notify{Via: NotifyOSC777}.escape("cotal;dev", "x needs you")), "\x1b]777;notify;cotal,dev;x needs you\a"; got != want {
		t.Errorf("OSC 777 %q, want %q", got, want)
	}
	out := &syncBuffer{}
	w, al := terminalAlerts(t.Context(), out, Notify{Via: NotifyOSC9}, nil)
	al.notify("cotal · dev", "crash needs you")
	al.bell()
	if out.String() != "" {
		t.Fatalf("written before any frame: %q", out.String())
	}
	_, _ = w.Write([]byte("FRAME"))
	_, _ = w.Write([]byte("NEXT"))
	if got, want := out.String(), "FRAME\x1b]9;cotal · dev: crash needs you\a\aNEXT"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	// With no frame to follow, the alert is written on its own.
	al.bell()
	waitUntil(t, 5*time.Second, func() bool { return out.String() == "FRAME\x1b]9;cotal · dev: crash needs you\a\aNEXT\a" })
}

// syncBuffer is a bytes.Buffer the program writes and the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The whole dashboard on a real mesh: a peer that starts waiting after
// the dashboard looked raises the notification, written to the terminal.
func TestRunNotifiesTheTerminalOfANewNeed(t *testing.T) {
	m := startMesh(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := m.endpoint(t, "operator")
	out := &syncBuffer{}
	in, inw := io.Pipe()
	defer inw.Close()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Endpoint: e, In: in, Out: out, Notify: Notify{Via: NotifyOSC777}, Tick: 50 * time.Millisecond})
	}()
	w := m.writers(t, ctx, 1)[0] // working: it needs nobody
	waitUntil(t, 10*time.Second, func() bool { return strings.Contains(out.String(), "peer0000") })
	if err := w.Set(presence.Waiting, "approve the push"); err != nil {
		t.Fatal(err)
	}
	want := "\x1b]777;notify;cotal · dash;peer0000 needs you: waiting "
	waitUntil(t, 10*time.Second, func() bool { return strings.Contains(out.String(), want) })
	if s := out.String(); !strings.Contains(s[strings.Index(s, want):], ", approve the push\a") {
		t.Errorf("the notification does not say what the peer waits for: %q", s[strings.Index(s, want):])
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
