package mesh_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh"
)

func TestParseWindow(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", 0, false}, {"30s", 30 * time.Second, false}, {"24h", 24 * time.Hour, false}, {"2d", 48 * time.Hour, false},
		{"1.5h", 0, true}, {"h", 0, true}, {"10", 0, true}, {"-1h", 0, true}, {"1w", 0, true}, {"1H", 0, true},
	} {
		got, err := mesh.ParseWindow(tc.in)
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("ParseWindow(%q) = %s, %v", tc.in, got, err)
		}
		if tc.bad && !strings.Contains(err.Error(), "s, m, h or d") {
			t.Errorf("refusal of %q does not state the rule: %v", tc.in, err)
		}
	}
}

func TestResolveFallbackOrder(t *testing.T) {
	off, on := false, true
	for _, tc := range []struct {
		name    string
		ch, def *mesh.ChannelConfig
		want    mesh.Effective
	}{
		{"built-in", nil, nil, mesh.Effective{Replay: true, Class: mesh.ClassDurable}},
		{"defaults", nil, &mesh.ChannelConfig{Replay: &off, DeliveryClass: "live", ReplayWindow: "1h"}, mesh.Effective{Replay: false, Class: "live", ReplayWindow: time.Hour}},
		{"channel wins", &mesh.ChannelConfig{Replay: &on, DeliveryClass: "durable"}, &mesh.ChannelConfig{Replay: &off, DeliveryClass: "live"}, mesh.Effective{Replay: true, Class: "durable", Registered: true}},
		{"partial channel", &mesh.ChannelConfig{Description: "d"}, &mesh.ChannelConfig{DeliveryClass: "live"}, mesh.Effective{Replay: true, Class: "live", Registered: true}},
	} {
		if got := mesh.Resolve(tc.ch, tc.def); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestRegistryWritesMergeAndRefuse(t *testing.T) {
	h := newHarness(t, false)
	reg, err := mesh.OpenRegistry(ctxT(t), h.js, space)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	def, err := reg.Defaults(ctx)
	if err != nil || def == nil || def.DeliveryClass != mesh.ClassDurable {
		t.Fatalf("auth space defaults: %+v %v", def, err)
	}
	if _, err := reg.Set(ctx, "team", mesh.ChannelConfig{Description: "the team", ReplayWindow: "24h"}); err != nil {
		t.Fatal(err)
	}
	got, err := reg.Set(ctx, "team", mesh.ChannelConfig{DeliveryClass: "live"})
	if err != nil || got.Description != "the team" || got.ReplayWindow != "24h" || got.DeliveryClass != "live" {
		t.Fatalf("merge: %+v %v", got, err)
	}
	eff, err := reg.Effective(ctx, "team")
	if err != nil || eff.Class != "live" || eff.ReplayWindow != 24*time.Hour || !eff.Replay {
		t.Fatalf("effective: %+v %v", eff, err)
	}
	for _, bad := range []mesh.ChannelConfig{
		{ReplayWindow: "soon"}, {DeliveryClass: "sometimes"},
		{Description: strings.Repeat("x", mesh.MaxDescription+1)}, {Instructions: strings.Repeat("x", mesh.MaxInstructions+1)},
	} {
		if _, err := reg.Set(ctx, "team", bad); !errors.Is(err, mesh.ErrBadChannelConfig) {
			t.Errorf("accepted %+v: %v", bad, err)
		}
	}
	if _, err := reg.Set(ctx, "team.>", mesh.ChannelConfig{Description: "x"}); err == nil {
		t.Error("registered a wildcard")
	}
	names, all, err := reg.List(ctx)
	if err != nil || len(names) != 1 || all["team"].Description != "the team" {
		t.Fatalf("list: %v %v %v", names, all, err)
	}
	// An agent reads the registry but cannot write it.
	a := h.agentEndpoint(alice, mesh.Options{OneShot: true})
	areg, err := a.Registry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if eff, err := areg.Effective(ctx, "team"); err != nil || eff.Class != "live" {
		t.Fatalf("agent read: %+v %v", eff, err)
	}
	if _, err := areg.Set(ctx, "team", mesh.ChannelConfig{Description: "mine"}); !errors.Is(err, mesh.ErrNotAllowed) {
		t.Fatal("an agent wrote the registry")
	}
}

func TestOpenSpaceDefaultsToLive(t *testing.T) {
	h := newHarness(t, true)
	reg, err := mesh.OpenRegistry(ctxT(t), h.js, space)
	if err != nil {
		t.Fatal(err)
	}
	eff, err := reg.Effective(ctxT(t), "anything")
	if err != nil || eff.Class != mesh.ClassLive {
		t.Fatalf("open space: %+v %v", eff, err)
	}
}
