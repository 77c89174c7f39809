package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// limits runs `history limit` with args and decodes its --json answer.
func (c cli) limits(args ...string) clirender.ChatLimits {
	c.t.Helper()
	out, errOut, code := c.run(append([]string{"history", "limit", "--json"}, args...)...)
	var l clirender.ChatLimits
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil {
		c.t.Fatalf("history limit %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return l
}

// chatConfig is the CHAT stream's configuration as the broker holds it.
func chatConfig(t *testing.T, h *host.Host, space string) jetstream.StreamConfig {
	t.Helper()
	op, err := h.Broker().Internal()
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(op)
	st, err := js.Stream(testmesh.Ctx(t), wire.ChatStream(space))
	if err != nil {
		t.Fatal(err)
	}
	return st.CachedInfo().Config
}

// TestConformanceSeedHistoryLimitAgeAndPerSenderCount: the channel-
// permissions page: a space keeps each sender's newest 1000 posts per
// channel with no age limit; `cotal history limit` sets an age, another
// per-sender count or both, a lower limit deletes at once what it no
// longer keeps, the busy sender's oldest going first, and `cotal up` never
// changes the limit.
func TestConformanceSeedHistoryLimitAgeAndPerSenderCount(t *testing.T) {
	const space = "limits"
	c := newCLI(t, space)
	h := c.host()
	if l := c.limits(); l.MaxPerSender != 1000 || l.MaxAge != "" {
		t.Fatalf("default limits %+v; want 1000 per sender, no age limit", l)
	}

	ctx := testmesh.Ctx(t)
	post := func(name string, texts ...string) {
		t.Helper()
		path, _ := testmesh.Mint(t, h.Broker(), broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: name}, AllowPublish: []string{"team"}})
		e, err := mesh.Connect(ctx, mesh.Options{URL: h.Broker().URL(), Creds: path, OneShot: true})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		for _, text := range texts {
			if _, err := e.Send(ctx, "team", text); err != nil {
				t.Fatal(err)
			}
		}
	}
	post("busy", "b1", "b2", "b3", "b4", "b5")
	post("calm", "c1", "c2")

	if l := c.limits("--max-per-sender", "2"); l.MaxPerSender != 2 || l.Messages != 4 {
		t.Fatalf("after --max-per-sender 2: %+v; want 4 posts kept at once (each sender's newest 2)", l)
	}
	out, errOut, code := c.run("history", "team", "--json")
	var hist struct {
		Items []mesh.HistoryItem `json:"items"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &hist) != nil {
		t.Fatalf("history team: exit %d\n%s%s", code, out, errOut)
	}
	var kept []string
	for _, it := range hist.Items {
		kept = append(kept, it.Msg.Text())
	}
	slices.Sort(kept)
	if want := []string{"b4", "b5", "c1", "c2"}; !slices.Equal(kept, want) {
		t.Fatalf("kept %v, want %v: the busy sender's oldest go first, the other's stay", kept, want)
	}

	if l := c.limits("--max-age", "1s"); l.MaxAge != "1s" || l.MaxPerSender != 2 {
		t.Fatalf("after --max-age 1s: %+v", l)
	}
	if cfg := chatConfig(t, h, space); cfg.MaxAge != time.Second || cfg.Duplicates > time.Second {
		t.Fatalf("stream max_age %s, duplicate window %s; the window may not exceed the age", cfg.MaxAge, cfg.Duplicates)
	}
	// The broker deletes the posts past the age (JetStream expires them on
	// its own timer, so this polls).
	testutil.WaitFor(t, 15*time.Second, func() error {
		if l := c.limits(); l.Messages != 0 {
			return fmt.Errorf("%d posts still kept past a 1s age", l.Messages)
		}
		return nil
	})
	if l := c.limits("--max-age", "0"); l.MaxAge != "" {
		t.Fatalf("after --max-age 0: %+v; want no age limit", l)
	}
	if cfg := chatConfig(t, h, space); cfg.MaxAge != 0 || cfg.Duplicates != 2*time.Minute {
		t.Fatalf("after --max-age 0: max_age %s, duplicate window %s; want none and 2m", cfg.MaxAge, cfg.Duplicates)
	}

	for _, bad := range [][]string{{"--max-age", "-1s"}, {"--max-age", "500ms"}, {"--max-per-sender", "0"}} {
		if out, errOut, code := c.run(append([]string{"history", "limit"}, bad...)...); code != exitUsage {
			t.Errorf("history limit %v: exit %d, want %d\n%s%s", bad, code, exitUsage, out, errOut)
		}
	}

	// A restart of the mesh (what `cotal up` does) keeps the limit.
	c.limits("--max-age", "72h")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h2, err := host.Start(context.Background(), host.Config{Paths: c.paths, NoManager: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h2.Close() })
	if l := c.limits(); l.MaxAge != "72h0m0s" || l.MaxPerSender != 2 {
		t.Fatalf("after a restart: %+v; the mesh's start changed the limit", l)
	}
}
