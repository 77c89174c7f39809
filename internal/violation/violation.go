// Package violation routes the broker's asynchronous permission refusals to
// whoever waits for them. The broker drops a refused publish silently and
// tells only the connection's error handler, so without this a refused
// JetStream publish or request would simply wait for an answer that never
// comes. Both the messaging endpoint and the control-surface client use it.
package violation

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Operations a refusal names.
const (
	Publish      = "publish"
	Subscription = "subscription"
)

// Parse extracts the subject and operation of a permission error.
func Parse(err error) (subject, op string, ok bool) {
	if err == nil || !errors.Is(err, nats.ErrPermissionViolation) {
		return "", "", false
	}
	s := err.Error()
	low := strings.ToLower(s)
	for _, o := range []string{Publish, Subscription} {
		marker := "for " + o + " to \""
		i := strings.Index(low, marker)
		if i < 0 {
			continue
		}
		rest := s[i+len(marker):]
		j := strings.IndexByte(rest, '"')
		if j < 0 {
			return "", "", false
		}
		return rest[:j], o, true
	}
	return "", "", false
}

// Tracker collects one connection's refusals: waiters by subject, and the
// recent ones for a check after the fact. Safe for concurrent use.
type Tracker struct {
	mu      sync.Mutex
	waiters map[string][]chan error // subject -> waiting callers
	recent  []refused               // newest last, bounded
}

type refused struct {
	subject, op string
	at          time.Time
	err         error
}

// New returns an empty tracker.
func New() *Tracker { return &Tracker{waiters: map[string][]chan error{}} }

// Watch returns a channel that receives a refusal naming subject, and a
// function that stops watching.
func (t *Tracker) Watch(subject string) (<-chan error, func()) {
	ch := make(chan error, 1)
	t.mu.Lock()
	t.waiters[subject] = append(t.waiters[subject], ch)
	t.mu.Unlock()
	return ch, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		ws := t.waiters[subject]
		for i, w := range ws {
			if w == ch {
				t.waiters[subject] = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(t.waiters[subject]) == 0 {
			delete(t.waiters, subject)
		}
	}
}

// Record takes one error from the connection's handler; it reports whether
// it was a refusal, and hands it to whoever watches its subject.
func (t *Tracker) Record(err error) (subject, op string, ok bool) {
	subject, op, ok = Parse(err)
	if !ok {
		return "", "", false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recent = append(t.recent, refused{subject: subject, op: op, at: time.Now(), err: err})
	if len(t.recent) > 64 {
		t.recent = t.recent[len(t.recent)-64:]
	}
	for _, w := range t.waiters[subject] {
		select {
		case w <- err:
		default:
		}
	}
	return subject, op, true
}

// Since returns the refusal of op on subject recorded at or after at.
func (t *Tracker) Since(subject, op string, at time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.recent) - 1; i >= 0; i-- {
		r := t.recent[i]
		if r.at.Before(at) {
			break
		}
		if r.subject == subject && r.op == op {
			return r.err
		}
	}
	return nil
}
