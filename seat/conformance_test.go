package seat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// inboxLines peeks at what the seat's connector holds for its inbox read.
func inboxLines(t *testing.T, h *harness, acc client.SpawnAccepted) string {
	t.Helper()
	c := h.client(h.op, proto.Caller{Owner: acc.Owner, Actor: acc.Actor, UID: acc.UID})
	r, err := c.Call(ctxT(t), wire.ManagerEndpoint, "inbox", client.InboxArgs{Peek: true}, ep.Self(), ep.On(h.iid))
	if err != nil {
		t.Fatal(err)
	}
	var inbox client.InboxReply
	if err := decode(r.Data, &inbox); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, it := range inbox.Items {
		lines = append(lines, it.Line)
	}
	return strings.Join(lines, "\n")
}

// TestConformance57_FocusMentionWakesWithoutAmbient: under focus an
// @mention of the agent wakes it (it reaches the seat's terminal) while the
// channel's ambient post stays for the inbox read. The mention was left in
// the inbox and never woke the agent.
func TestConformance57_FocusMentionWakesWithoutAmbient(t *testing.T) {
	h, acc := injectMesh(t, 0, "")
	bob := h.peer(t, "bob", []string{"team"})
	selfCall(t, h, acc, wire.ManagerSetAttention, client.AttentionArgs{Attention: "focus"})
	if _, err := bob.Send(ctxT(t), "team", "ambient-under-focus"); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Send(ctxT(t), "team", "mention-under-focus", mesh.WithMentions(acc.Name)); err != nil {
		t.Fatal(err)
	}
	text := waitScreen(t, h.c, h.iid, acc.Name, "mention-under-focus", 10*time.Second)
	if strings.Contains(text, "ambient-under-focus") {
		t.Fatalf("an ambient post rode along with the mention under focus:\n%s", text)
	}
	waitFor(t, 10*time.Second, func() error {
		if got := inboxLines(t, h, acc); !strings.Contains(got, "ambient-under-focus") {
			return fmt.Errorf("the ambient post is not waiting in the inbox:\n%s", got)
		}
		return nil
	})
	if text := screen(t, h.c, h.iid, acc.Name).Screen; strings.Contains(text, "ambient-under-focus") {
		t.Fatalf("the ambient post was injected under focus:\n%s", text)
	}
}

// TestConformanceAgentFileQuietAndMutedAreTheSeatsStartingModes: an agent
// file's quiet: and muted: lists are the seat's channel modes from its
// start (spec §12: the file's defaults, changed at runtime): a quiet
// channel's ambient post waits for the inbox while its mention is
// injected, a muted channel drops even a mention, and the seat's presence
// says so. They were parsed and never applied.
func TestConformanceAgentFileQuietAndMutedAreTheSeatsStartingModes(t *testing.T) {
	h, acc := injectMesh(t, 0, "quiet: [calm]\nmuted: [noise]\n")
	want := map[string]string{"calm": "quiet", "noise": "muted"}
	js, _ := jetstream.New(h.op)
	kv, err := js.KeyValue(ctxT(t), wire.PresenceBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() error {
		e, err := kv.Get(ctxT(t), wire.Principal{Owner: acc.Owner, Actor: acc.Actor}.ID())
		if err != nil {
			return err
		}
		var rec presence.Record
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			return err
		}
		if !maps.Equal(rec.ChannelModes, want) {
			return fmt.Errorf("presence channelModes %v, want %v", rec.ChannelModes, want)
		}
		return nil
	})

	bob := h.peer(t, "bob", []string{"team", "noise", "calm"})
	w, err := bob.WatchReceipts()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := bob.Send(ctxT(t), "calm", "calm-ambient"); err != nil {
		t.Fatal(err)
	}
	muted, err := bob.Send(ctxT(t), "noise", "noise-mention", mesh.WithMentions(acc.Name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Send(ctxT(t), "calm", "calm-mention", mesh.WithMentions(acc.Name)); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Send(ctxT(t), "team", "team-ambient"); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, h.c, h.iid, acc.Name, "calm-mention", 10*time.Second)
	waitScreen(t, h.c, h.iid, acc.Name, "team-ambient", 10*time.Second)
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if p := w.Wait(wctx, muted.ID, wire.RungAcked, 1, nil)[0]; p.Reached != wire.RungAcked || p.Why != "dropped: channel #noise is muted" {
		t.Fatalf("the muted channel's mention: %+v, want dropped unread", p)
	}
	waitFor(t, 10*time.Second, func() error {
		if got := inboxLines(t, h, acc); !strings.Contains(got, "calm-ambient") {
			return fmt.Errorf("the quiet channel's post is not waiting in the inbox:\n%s", got)
		}
		return nil
	})
	text := screen(t, h.c, h.iid, acc.Name).Screen
	for _, no := range []string{"calm-ambient", "noise-mention"} {
		if strings.Contains(text, no) {
			t.Errorf("%q was injected:\n%s", no, text)
		}
	}
}
