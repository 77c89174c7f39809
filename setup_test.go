package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testdelivery"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestConformanceSeedSetupPersonaMayJoinReadAndPost: the channel-permissions
// page says the persona `cotal setup` seeds starts with subscribe: [],
// allowSubscribe: [">"] and allowPublish: [">"]: it joins nothing at boot
// and may join, read and post on demand. The seeded file had no lists, so
// a seat of it could read and post nothing.
func TestConformanceSeedSetupPersonaMayJoinReadAndPost(t *testing.T) {
	c := newCLI(t, "seeded")
	dir := t.TempDir()
	if out, errOut, code := c.run("setup", "--dir", dir); code != 0 {
		t.Fatalf("setup: exit %d\n%s%s", code, out, errOut)
	}
	a, err := config.LoadAgentFile(filepath.Join(config.AgentsDir(dir), "default.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Subscribe) != 0 || !slices.Equal(a.AllowSubscribe, []string{">"}) || !slices.Equal(a.AllowPublish, []string{">"}) {
		t.Fatalf("seeded lists: subscribe %q, allowSubscribe %q, allowPublish %q; want [], [>], [>]", a.Subscribe, a.AllowSubscribe, a.AllowPublish)
	}
	if _, given := a.Line("subscribe"); !given {
		t.Error("the seeded persona does not say subscribe: [] outright")
	}

	// A credential minted from those lists, as a seat of the persona gets.
	const space = "seeded"
	b, _ := testmesh.Start(t, space, false)
	testdelivery.Start(t, b, space)
	path, _ := testmesh.Mint(t, b, broker.Identity{
		Space: space, Principal: wire.Principal{Owner: "local", Actor: "default"},
		Subscribe: a.Subscribe, AllowSubscribe: a.AllowSubscribe, AllowPublish: a.AllowPublish,
	})
	peer, _ := testmesh.Mint(t, b, broker.Identity{
		Space: space, Principal: wire.Principal{Owner: "local", Actor: "peer"}, AllowPublish: []string{"team.backend"},
	})
	ctx := testmesh.Ctx(t)
	e, err := mesh.Connect(ctx, mesh.Options{URL: b.URL(), Creds: path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := e.Channels(); len(got) != 0 {
		t.Fatalf("joined %q at boot; the seeded persona joins nothing", got)
	}
	for _, ch := range []string{"team.backend", "anything"} {
		if _, err := e.Join(ctx, ch); err != nil {
			t.Fatalf("join #%s: %v", ch, err)
		}
	}
	p, err := mesh.Connect(ctx, mesh.Options{URL: b.URL(), Creds: peer, OneShot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Send(ctx, "team.backend", "for whoever listens"); err != nil {
		t.Fatal(err)
	}
	nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	it, err := e.Next(nctx)
	if err != nil || it.Msg.Channel != "team.backend" {
		t.Fatalf("reading #team.backend: %v %+v", err, it)
	}
	for _, ch := range []string{"anything", "elsewhere.deep"} {
		if _, err := e.Send(ctx, ch, "posted on demand"); err != nil {
			t.Fatalf("post to #%s: %v", ch, err)
		}
	}
}
