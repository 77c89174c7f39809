package tty

import (
	"bytes"
	"io"

	"github.com/muesli/cancelreader"
)

// keyEvent is what the person typed: bytes for the seat, or the detach key.
type keyEvent struct {
	keys   []byte
	detach bool
}

// keyboard reads the person's keys into events, in order, cutting at the
// detach key; events is closed after the detach key or at the end of the
// input. Its reads can be cancelled, so a dashboard that takes its
// terminal back never loses a key to a read left behind.
type keyboard struct {
	r      io.Reader
	cancel func() bool // interrupts a pending read; false if it cannot
	close  func() error
	key    byte
	events chan keyEvent
	quit   chan struct{}
	done   chan struct{}
}

func startKeyboard(t *terminal, detach byte) *keyboard {
	k := &keyboard{key: detach, events: make(chan keyEvent), quit: make(chan struct{}), done: make(chan struct{})}
	if cr, err := cancelreader.NewReader(t.in); err == nil {
		k.r, k.cancel, k.close = cr, cr.Cancel, cr.Close
	} else { // not pollable (a regular file): reads end on their own
		k.r, k.cancel, k.close = t.in, func() bool { return false }, func() error { return nil }
	}
	go k.loop(t)
	return k
}

func (k *keyboard) loop(t *terminal) {
	defer close(k.done)
	defer close(k.events)
	defer t.guard()
	buf := make([]byte, 4096)
	for {
		n, err := k.r.Read(buf)
		if n > 0 {
			p := buf[:n]
			if i := bytes.IndexByte(p, k.key); i >= 0 {
				if i > 0 && !k.put(keyEvent{keys: bytes.Clone(p[:i])}) {
					return
				}
				k.put(keyEvent{detach: true})
				return
			}
			if !k.put(keyEvent{keys: bytes.Clone(p)}) {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (k *keyboard) put(ev keyEvent) bool {
	select {
	case k.events <- ev:
		return true
	case <-k.quit:
		return false
	}
}

// stop ends the reader and waits for it, when its read can be cancelled.
func (k *keyboard) stop() {
	close(k.quit)
	if k.cancel() {
		<-k.done
	}
	_ = k.close()
}
