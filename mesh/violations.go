package mesh

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// violations collects the broker's asynchronous permission refusals. The
// broker drops a refused publish silently and tells the connection's error
// handler, so without this a refused JetStream publish would simply wait
// for an ack that never comes.
type violations struct {
	mu      sync.Mutex
	waiters map[string][]chan error // publish subject -> waiting senders
	recent  []violation             // newest last, bounded
}

type violation struct {
	subject string
	op      string // "publish" or "subscription"
	at      time.Time
	err     error
}

func newViolations() *violations {
	return &violations{waiters: map[string][]chan error{}}
}

// parseViolation extracts the subject and operation of a permission error.
func parseViolation(err error) (subject, op string, ok bool) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return "", "", false
	}
	s := err.Error()
	low := strings.ToLower(s)
	for _, o := range []string{"publish", "subscription"} {
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

// watch returns a channel that receives the refusal of a publish to subject.
func (v *violations) watch(subject string) (<-chan error, func()) {
	ch := make(chan error, 1)
	v.mu.Lock()
	v.waiters[subject] = append(v.waiters[subject], ch)
	v.mu.Unlock()
	return ch, func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		ws := v.waiters[subject]
		for i, w := range ws {
			if w == ch {
				v.waiters[subject] = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(v.waiters[subject]) == 0 {
			delete(v.waiters, subject)
		}
	}
}

func (v *violations) record(subject, op string, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.recent = append(v.recent, violation{subject: subject, op: op, at: time.Now(), err: err})
	if len(v.recent) > 64 {
		v.recent = v.recent[len(v.recent)-64:]
	}
	if op == "publish" {
		for _, w := range v.waiters[subject] {
			select {
			case w <- err:
			default:
			}
		}
	}
}

// since returns the refusal of op on subject recorded at or after t.
func (v *violations) since(subject, op string, t time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := len(v.recent) - 1; i >= 0; i-- {
		r := v.recent[i]
		if r.at.Before(t) {
			break
		}
		if r.subject == subject && r.op == op {
			return r.err
		}
	}
	return nil
}
