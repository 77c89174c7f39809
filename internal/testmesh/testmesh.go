// Package testmesh stands up a real, provisioned mesh for tests: the
// production broker on a temp store and a free port, and identities
// minted and provisioned as `cotal mint` does. Only tests import it.
package testmesh

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
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
	b, err := broker.Start(broker.Options{Paths: config.Paths{Space: space, StoreDir: t.TempDir()}, Open: open})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	op, err := b.Internal()
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.Provision(Ctx(t), op, space, open); err != nil {
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
