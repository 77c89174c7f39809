package ep

import (
	"errors"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
)

// violations routes the broker's asynchronous permission refusals to the call waiting on that subject: the broker drops a refused publish and tells only the connection's error handler.
type violations struct {
	mu      sync.Mutex
	waiters map[string][]chan error // subject -> waiting callers
}

func newViolations() *violations { return &violations{waiters: map[string][]chan error{}} }

// parseViolation extracts the subject and operation (publish or subscription) of a permission error.
func parseViolation(err error) (subject, op string, ok bool) {
	if err == nil || !errors.Is(err, nats.ErrPermissionViolation) {
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

func (v *violations) record(err error) bool {
	subj, _, ok := parseViolation(err)
	if !ok {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, w := range v.waiters[subj] {
		select {
		case w <- err:
		default:
		}
	}
	return true
}

// refusedNow reports a refusal of subject the connection has already read: the broker sends -ERR before the PONG that ends a flush, and the client records it as its last error synchronously, before the async handler runs.
func refusedNow(nc *nats.Conn, subject string, watched <-chan error) error {
	select {
	case err := <-watched:
		return err
	default:
	}
	if subj, _, ok := parseViolation(nc.LastError()); ok && subj == subject {
		return nc.LastError()
	}
	return nil
}
