package mesh

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
)

// TooLargeError is a message the mesh would not take: Limit is the most
// one message may take, in bytes; Size is the text's own encoded size when
// that alone is over it, 0 when the envelope tipped it over. Nothing was
// sent.
type TooLargeError struct {
	Limit, Size int64
}

func (e *TooLargeError) Error() string {
	size := "with its envelope it is over that"
	if e.Size > e.Limit {
		size = fmt.Sprintf("this one is %d KiB encoded", (e.Size+1023)>>10)
	}
	return fmt.Sprintf("the message is too large: the mesh takes at most %d KiB per message, and %s; nothing was sent", e.Limit>>10, size)
}

// CheckSize refuses a text whose encoding alone is over what the mesh
// takes (a *TooLargeError), before anything is sent.
func (e *Endpoint) CheckSize(text string) error {
	b, _ := json.Marshal(text)
	if limit := e.nc.MaxPayload(); int64(len(b)) > limit {
		return &TooLargeError{Limit: limit, Size: int64(len(b))}
	}
	return nil
}

// AsTooLarge turns a send refused for its size (nats.go sends nothing past
// the broker's maximum payload) into a *TooLargeError; other errors pass.
func (e *Endpoint) AsTooLarge(err error) error {
	if errors.Is(err, nats.ErrMaxPayload) {
		return &TooLargeError{Limit: e.nc.MaxPayload()}
	}
	return err
}
