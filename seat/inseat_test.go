package seat_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// The cotal CLI run inside a seat acts as the seat: its creds and manager
// instance come from the seat's environment.
func TestSendFromInsideASeatIsTheSeat(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, map[string]string{"COTAL_BIN": cotalBin, "COTAL_HOME": t.TempDir()})

	cr, _, err := issue.Mint(ctxT(t), h.paths, broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "alice"}, AllowPublish: []string{}}, h.op)
	if err != nil {
		t.Fatal(err)
	}
	credsPath := filepath.Join(t.TempDir(), "alice.creds")
	if err := broker.WriteCreds(credsPath, cr); err != nil {
		t.Fatal(err)
	}
	alice, err := mesh.Connect(ctxT(t), mesh.Options{URL: h.m.Broker().URL(), Creds: credsPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alice.Close() })

	acc := h.ready("shell")
	input(t, h.c, h.iid, acc.Name, `"$COTAL_BIN" send dm alice hi-from-seat`)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		it, err := alice.Next(ctx)
		if err != nil {
			t.Fatalf("alice got no DM from the seat: %v\nseat screen:\n%s", err, screen(t, h.c, h.iid, acc.Name).Screen)
		}
		_ = it.Ack()
		if it.Kind != wire.KindDM || !strings.Contains(it.Msg.Text(), "hi-from-seat") {
			continue
		}
		if it.Msg.From.ID != "local."+acc.Name {
			t.Fatalf("the DM typed in seat %s came from %q", acc.Name, it.Msg.From.ID)
		}
		break
	}
	waitScreen(t, h.c, h.iid, acc.Name, "DM to alice", 5*time.Second)

	if _, err := alice.DM(ctxT(t), "local."+acc.Name, "hi-to-seat"); err != nil {
		t.Fatal(err)
	}
	// The connector may not hold the DM yet when inbox first runs: read
	// until it shows, each read fenced by a marker line after it.
	var text string
	for i := 0; ; i++ {
		input(t, h.c, h.iid, acc.Name, fmt.Sprintf(`"$COTAL_BIN" inbox; echo inbox-do''ne-%d`, i))
		text = waitScreen(t, h.c, h.iid, acc.Name, fmt.Sprintf("inbox-done-%d", i), 10*time.Second)
		if strings.Contains(text, "[DM from alice] hi-to-seat") {
			break
		}
		if i == 20 {
			t.Fatalf("cotal inbox in the seat never showed alice's DM:\n%s", text)
		}
	}
	if strings.Contains(text, "✗") {
		t.Fatalf("a cotal command in the seat failed:\n%s", text)
	}
	// The read acked it: the next one is empty.
	input(t, h.c, h.iid, acc.Name, `"$COTAL_BIN" inbox; echo second-rea''d-done`)
	text = waitScreen(t, h.c, h.iid, acc.Name, "second-read-done", 10*time.Second)
	tail := text[strings.LastIndex(text, "inbox-done-"):]
	if !strings.Contains(tail, "Inbox empty") || strings.Contains(tail, "hi-to-seat") {
		t.Fatalf("second inbox read in the seat:\n%s", tail)
	}
}
