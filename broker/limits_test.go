package broker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestOneCredentialCannotHoldEveryConnection: connections past
// MaxConnsPerUser on one agent credential are closed by the broker, while
// another agent and the operator still connect. Before, about 20 000
// connections on one credential took the process's descriptor limit and
// the mesh stopped answering.
func TestOneCredentialCannotHoldEveryConnection(t *testing.T) {
	b := startBroker(t, false)
	id := alice()
	id.Space = space
	creds, err := b.Authority().Mint(id)
	if err != nil {
		t.Fatal(err)
	}
	extra := broker.MaxConnsPerUser + 16
	var conns []*nats.Conn
	for range extra {
		nc, err := nats.Connect(b.URL(), nats.UserJWTAndSeed(creds.JWT, string(creds.Seed)), nats.NoReconnect(),
			nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		if err != nil {
			continue // refused at once: the same outcome
		}
		conns = append(conns, nc)
		t.Cleanup(nc.Close)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		open := 0
		for _, nc := range conns {
			if !nc.IsClosed() {
				open++
			}
		}
		if open > broker.MaxConnsPerUser {
			return fmt.Errorf("%d of %d connections on one credential are open, the limit is %d", open, extra, broker.MaxConnsPerUser)
		}
		return nil
	})
	other := mintAndConnect(t, b, broker.Identity{Principal: wire.Principal{Owner: "local", Actor: "bob"}})
	if err := other.nc.Flush(); err != nil {
		t.Fatalf("another agent cannot use its connection: %v", err)
	}
	op, err := b.Connect("operator")
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err := op.Flush(); err != nil {
		t.Fatalf("the operator cannot use its connection: %v", err)
	}
}

// TestSubscriptionsPerConnectionAreBounded: an agent's connection is
// refused subscriptions past MaxSubsPerConn.
func TestSubscriptionsPerConnectionAreBounded(t *testing.T) {
	b := startBroker(t, false)
	c := mintAndConnect(t, b, alice())
	inbox := c.nc.NewRespInbox()
	prefix := inbox[:strings.LastIndexByte(inbox, '.')]
	for i := range broker.MaxSubsPerConn + 8 {
		if _, err := c.nc.SubscribeSync(fmt.Sprintf("%s.s%d", prefix, i)); err != nil {
			break
		}
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		_ = c.nc.Flush()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, e := range c.errs {
			if strings.Contains(strings.ToLower(e), "maximum subscriptions exceeded") {
				return nil
			}
		}
		return fmt.Errorf("no refusal past %d subscriptions (errors so far: %v)", broker.MaxSubsPerConn, c.errs)
	})
}
