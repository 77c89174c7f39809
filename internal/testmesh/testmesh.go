// Package testmesh stands up a real, provisioned mesh for tests: the
// production broker on a temp store and a free port, and identities
// minted and provisioned as `cotal mint` does. Only tests import it.
package testmesh

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Ctx is a context that ends with the test (or after 30 s).
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Start starts a provisioned broker for space (authenticated unless open)
// and returns it with its in-process operator connection; both stop with
// the test.
func Start(t testing.TB, space string, open bool) (*broker.Broker, *nats.Conn) {
	t.Helper()
	return StartWith(t, space, broker.Options{Open: open})
}

// StartWith is Start with broker options (its store is a temp dir).
func StartWith(t testing.TB, space string, o broker.Options) (*broker.Broker, *nats.Conn) {
	t.Helper()
	o.Paths = config.Paths{Space: space, StoreDir: t.TempDir()}
	open := o.Open
	b, err := broker.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	op, err := b.Internal()
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.Provision(Ctx(t), op, space, open, b.MaxStore()); err != nil {
		t.Fatal(err)
	}
	return b, op
}

// Mint mints id on b, provisions its durables and records as a running
// mesh does, and writes its creds to a 0600 file; it returns the file and
// the identity as minted (with its lifecycle uid).
func Mint(t testing.TB, b *broker.Broker, id broker.Identity) (string, broker.Identity) {
	t.Helper()
	c, err := b.Authority().Mint(id)
	if err != nil {
		t.Fatal(err)
	}
	op, err := b.Internal()
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.ProvisionIdentity(Ctx(t), op, c.Identity); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), id.Principal.Actor+".creds")
	if err := broker.WriteCreds(path, c); err != nil {
		t.Fatal(err)
	}
	return path, c.Identity
}

// Tap records every message on a subject pattern, headers included.
type Tap struct {
	mu   sync.Mutex
	msgs []*nats.Msg
}

// NewTap subscribes nc to pattern (confirmed by a flush) until the test ends.
func NewTap(t testing.TB, nc *nats.Conn, pattern string) *Tap {
	t.Helper()
	tp := &Tap{}
	sub, err := nc.Subscribe(pattern, func(m *nats.Msg) {
		tp.mu.Lock()
		tp.msgs = append(tp.msgs, m)
		tp.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return tp
}

// All is what the tap has seen so far, in arrival order.
func (tp *Tap) All() []*nats.Msg {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]*nats.Msg(nil), tp.msgs...)
}

// Store publishes msgs to streams that acknowledge nothing (CHAT, DM,
// TASK: they answer with stored notices instead) and waits until each is
// stored, returning their stream sequences in order; the test fails when
// they are not stored within 30 s.
func Store(t testing.TB, nc *nats.Conn, msgs ...*nats.Msg) []uint64 {
	t.Helper()
	seqs, err := Publish(nc, 30*time.Second, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	return seqs
}

// StoreData is Store of one body on subject.
func StoreData(t testing.TB, nc *nats.Conn, subject string, data []byte) uint64 {
	t.Helper()
	m := nats.NewMsg(subject)
	m.Data = data
	return Store(t, nc, m)[0]
}

// Publish is Store that returns an error instead of failing the test. It
// listens on each sender's stored-notice subject, so nc needs only the
// rights the senders' own credentials carry. A message without a
// Nats-Msg-Id is given one.
func Publish(nc *nats.Conn, within time.Duration, msgs ...*nats.Msg) ([]uint64, error) {
	var mu sync.Mutex
	want := map[string]int{}
	seqs := make([]uint64, len(msgs))
	done := make(chan struct{})
	left := len(msgs)
	if left == 0 {
		return nil, nil
	}
	take := func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		id := m.Header.Get(nats.MsgIdHdr)
		i, ok := want[id]
		if !ok {
			return
		}
		delete(want, id)
		seqs[i], _ = strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
		if left--; left == 0 {
			close(done)
		}
	}
	filters := map[string]bool{}
	for _, m := range msgs {
		s, err := wire.ParseSubject(m.Subject)
		if err != nil {
			return nil, err
		}
		filters[wire.StoredFilter(s.Space, s.Sender)] = true
	}
	for f := range filters {
		sub, err := nc.Subscribe(f, take)
		if err != nil {
			return nil, err
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	mu.Lock()
	for i, m := range msgs {
		if m.Header == nil {
			m.Header = nats.Header{}
		}
		if m.Header.Get(nats.MsgIdHdr) == "" {
			m.Header.Set(nats.MsgIdHdr, wire.NewID())
		}
		want[m.Header.Get(nats.MsgIdHdr)] = i
	}
	mu.Unlock()
	for _, m := range msgs {
		if err := nc.PublishMsg(m); err != nil {
			return nil, err
		}
	}
	select {
	case <-done:
		return seqs, nil
	case <-time.After(within):
		mu.Lock()
		defer mu.Unlock()
		return nil, fmt.Errorf("%d of %d messages were not confirmed stored within %s", left, len(msgs), within)
	}
}
