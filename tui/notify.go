package tui

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Notify is how a desktop notification reaches the person when a seat
// newly needs them; the zero value sends none.
type Notify struct {
	Via     NotifyVia
	Command string // notify-send's path, for NotifySend
}

// NotifyVia names a way to raise a desktop notification.
type NotifyVia int

const (
	NotifyOff    NotifyVia = iota
	NotifyOSC9             // ESC ] 9 ; text BEL: iTerm2, kitty, Ghostty, WezTerm
	NotifyOSC777           // ESC ] 777 ; notify ; title ; body BEL: rxvt-unicode, foot, Ghostty, WezTerm
	NotifySend             // the notify-send command (libnotify)
)

// NotifyEnv is the environment variable that sets how notifications are
// sent: off, osc9, osc777, notify-send, or auto (the default).
const NotifyEnv = "COTAL_NOTIFY"

func (v NotifyVia) String() string {
	return [...]string{"off", "osc9", "osc777", "notify-send"}[v]
}

// PickNotify chooses how to notify from the environment: what NotifyEnv
// asks for, else an escape the terminal is known to show, else
// notify-send when it is installed and a desktop is there to show it,
// else none (the bell alone). Inside tmux or screen the terminal is not
// known: they swallow the escapes.
func PickNotify(getenv func(string) string, lookPath func(string) (string, error)) (Notify, error) {
	send := func() Notify {
		if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
			return Notify{}
		}
		if path, err := lookPath("notify-send"); err == nil {
			return Notify{Via: NotifySend, Command: path}
		}
		return Notify{}
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv(NotifyEnv))); v {
	case "", "auto":
	case "off", "0", "no", "false", "none":
		return Notify{}, nil
	case "osc9":
		return Notify{Via: NotifyOSC9}, nil
	case "osc777":
		return Notify{Via: NotifyOSC777}, nil
	case "notify-send":
		path, err := lookPath("notify-send")
		if err != nil {
			return Notify{}, errNotifySend
		}
		return Notify{Via: NotifySend, Command: path}, nil
	default:
		return Notify{}, &notifyEnvError{value: v}
	}
	term, prog := getenv("TERM"), getenv("TERM_PROGRAM")
	if getenv("TMUX") != "" || strings.HasPrefix(term, "screen") || strings.HasPrefix(term, "tmux") {
		return send(), nil
	}
	switch {
	case prog == "iTerm.app", term == "xterm-kitty", getenv("KITTY_WINDOW_ID") != "":
		return Notify{Via: NotifyOSC9}, nil
	case prog == "ghostty", prog == "WezTerm", term == "xterm-ghostty", term == "foot", term == "foot-extra",
		strings.HasPrefix(term, "rxvt-unicode"):
		return Notify{Via: NotifyOSC777}, nil
	}
	return send(), nil
}

var errNotifySend = &notifyEnvError{value: "notify-send", missing: true}

// notifyEnvError is a NotifyEnv value that cannot be honoured.
type notifyEnvError struct {
	value   string
	missing bool
}

func (e *notifyEnvError) Error() string {
	if e.missing {
		return NotifyEnv + "=notify-send, but notify-send is not on PATH"
	}
	return NotifyEnv + "=" + e.value + " is not a way to notify: use off, auto, osc9, osc777 or notify-send"
}

// notifyText keeps a notification to one short line of inert text, so
// nothing in it can end the escape or start another.
func notifyText(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, wire.Inert(s))
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// escape is the bytes that raise the notification in the terminal, nil
// for a way that is no escape.
func (n Notify) escape(title, body string) []byte {
	title, body = notifyText(title, 60), notifyText(body, 240)
	switch n.Via {
	case NotifyOSC9:
		// A text that starts with digits and ';' is a ConEmu command, not
		// a notification: the title in front keeps it from doing so.
		return []byte("\x1b]9;" + title + ": " + body + "\a")
	case NotifyOSC777:
		return []byte("\x1b]777;notify;" + strings.ReplaceAll(title, ";", ",") + ";" + body + "\a")
	}
	return nil
}

// notifySendTimeout bounds one notify-send.
const notifySendTimeout = 5 * time.Second

// alertFlushAfter is how long an alert waits for a frame to follow: a
// screen that does not change (help open, too small) draws none.
const alertFlushAfter = 200 * time.Millisecond

// termAlerts is what the dashboard writes to the terminal besides its
// frames: the bell and notification escapes, queued from Update and
// written right after the next frame, or on their own when no frame comes
// soon. mu keeps a frame and an alert from interleaving.
type termAlerts struct {
	mu      sync.Mutex
	out     io.Writer
	pending []byte
	timer   *time.Timer
}

func (a *termAlerts) queue(b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending = append(a.pending, b...)
	if a.timer == nil {
		a.timer = time.AfterFunc(alertFlushAfter, a.flush)
	}
}

// write writes a frame, then what is queued.
func (a *termAlerts) write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, err := a.out.Write(p)
	if err == nil {
		err = a.flushLocked()
	}
	return n, err
}

func (a *termAlerts) flush() {
	a.mu.Lock()
	defer a.mu.Unlock()
	_ = a.flushLocked()
}

func (a *termAlerts) flushLocked() error {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	if len(a.pending) == 0 {
		return nil
	}
	b := a.pending
	a.pending = nil
	_, err := a.out.Write(b)
	return err
}

// alerts are the model's ways to reach the person off the screen.
type alerts struct {
	bell   func()
	notify func(title, body string)
}

// terminalAlerts wraps the program's output so alerts follow the frame
// they were raised in. A terminal stays a terminal (bubbletea needs its Fd
// for the size and raw mode). notify-send runs off the UI goroutine.
func terminalAlerts(ctx context.Context, out io.Writer, n Notify, logf func(string)) (io.Writer, alerts) {
	a := &termAlerts{out: out}
	al := alerts{bell: func() { a.queue([]byte("\a")) }}
	switch n.Via {
	case NotifyOSC9, NotifyOSC777:
		al.notify = func(title, body string) { a.queue(n.escape(title, body)) }
	case NotifySend:
		var broken atomic.Bool // after one failure, none is tried again
		al.notify = func(title, body string) {
			if broken.Load() {
				return
			}
			go func() {
				cctx, cancel := context.WithTimeout(ctx, notifySendTimeout)
				defer cancel()
				cmd := exec.CommandContext(cctx, n.Command, "--app-name=cotal", notifyText(title, 60), notifyText(body, 240))
				var errb bytes.Buffer
				cmd.Stderr = &errb
				if err := cmd.Run(); err != nil && ctx.Err() == nil && !broken.Swap(true) && logf != nil {
					logf("notify-send failed, desktop notifications are off: " + strings.TrimSpace(err.Error()+" "+errb.String()))
				}
			}()
		}
	}
	if f, ok := out.(*os.File); ok {
		return &alertFile{File: f, a: a}, al
	}
	return &alertWriter{a: a}, al
}

type alertFile struct {
	*os.File
	a *termAlerts
}

func (f *alertFile) Write(p []byte) (int, error) { return f.a.write(p) }

type alertWriter struct{ a *termAlerts }

func (w *alertWriter) Write(p []byte) (int, error) { return w.a.write(p) }
