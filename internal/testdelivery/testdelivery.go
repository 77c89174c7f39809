// Package testdelivery runs a space's delivery service for tests, apart
// from testmesh so that tests inside package mesh (which delivery
// imports) can still use testmesh. Only tests import it.
package testdelivery

import (
	"errors"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/delivery"
)

// Start runs the space's delivery service on its own in-process
// connection until the test ends, and waits until it serves. An agent
// credential reads everything stored for it through that service.
func Start(t testing.TB, b *broker.Broker, space string) *delivery.Service {
	t.Helper()
	return StartWith(t, b, space, delivery.Options{})
}

// StartWith is Start with options (the space and a test log are filled
// in; a Logf of the caller's gets every line too).
func StartWith(t testing.TB, b *broker.Broker, space string, opts delivery.Options) *delivery.Service {
	t.Helper()
	nc, err := b.Connect("delivery")
	if err != nil {
		t.Fatal(err)
	}
	also := opts.Logf
	opts.Space, opts.Logf = space, func(f string, a ...any) {
		t.Logf("delivery: "+f, a...)
		if also != nil {
			also(f, a...)
		}
	}
	svc, err := delivery.Start(testmesh.Ctx(t), nc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(); nc.Close() })
	testutil.WaitFor(t, 10*time.Second, func() error {
		if !svc.Ready() {
			return errors.New("delivery service not serving yet")
		}
		return nil
	})
	return svc
}
