package ep

import (
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/violation"
)

// refusedNow reports a refusal of subject the connection has already read: the broker sends -ERR before the PONG that ends a flush, and the client records it as its last error synchronously, before the async handler runs.
func refusedNow(nc *nats.Conn, subject string, watched <-chan error) error {
	select {
	case err := <-watched:
		return err
	default:
	}
	if subj, _, ok := violation.Parse(nc.LastError()); ok && subj == subject {
		return nc.LastError()
	}
	return nil
}
