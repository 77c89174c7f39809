package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestProvisionIdentityWhileRevocationsApply: a mint's provisioning runs
// while seats end elsewhere, each end an account update that briefly takes
// the JetStream API's import away; every identity is still provisioned
// (the server's "no responders" in that gap is not a failure of the mint).
func TestProvisionIdentityWhileRevocationsApply(t *testing.T) {
	if testutil.RaceBuild {
		// nats-server (v2.15.2 and v2.15.3) rebuilds an account's imports on
		// each update and marks the new JetStream API import shared under
		// the account's lock, while a client's request in flight reads that
		// mark without it (jetstream.go enableAllJetStreamServiceImports-
		// AndMappings against client.go processServiceImport). This test
		// updates the account hundreds of times under JetStream requests, so
		// the race detector reports the server's race, not one of cotal's;
		// it runs in full in the plain suite.
		t.Skip("the race detector reports nats-server's own race on an account update under JetStream requests; this test runs without -race")
	}
	b, op := testmesh.Start(t, "rev", false)
	sys, err := b.ConnectSystem()
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			kp, _ := nkeys.CreateUser()
			pk, _ := kp.PublicKey()
			r := broker.Revocation{UserKey: pk, Principal: "local.gone", UID: "u"}
			if err := b.Authority().Revoke([]broker.Revocation{r}, func(ajwt string) error {
				return broker.PushAccount(context.Background(), sys, ajwt)
			}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for i := range 150 {
		id := broker.Identity{Space: "rev", Principal: wire.Principal{Owner: "local", Actor: fmt.Sprintf("a%d", i)}, AllowPublish: []string{}}
		c, err := b.Authority().Mint(id)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err = broker.ProvisionIdentity(ctx, op, c.Identity)
		cancel()
		if err != nil {
			t.Fatalf("provisioning identity %d while revocations apply: %v", i, err)
		}
	}
}
