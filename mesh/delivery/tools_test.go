package delivery_test

import (
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh"
)

func TestChannelsToolSaysClassAndBackstop(t *testing.T) {
	h := newHarness(t, false)
	h.setClass("live", mesh.ClassLive)
	path, _ := h.mint(agent{name: "m", subscribe: []string{"team", "live"}})
	e := h.connect(path, mesh.Options{})
	out, err := e.CallTool(ctxT(t), "cotal_channels", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "#team — durable, backstop active") || !strings.Contains(out, "#live — live") {
		t.Fatalf("cotal_channels:\n%s\nwant #team durable with its backstop active and #live live", out)
	}
	h.svc.Close()
	out, err = e.CallTool(ctxT(t), "cotal_channels", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "#team — durable, backstop DEGRADED") {
		t.Fatalf("cotal_channels with no delivery service:\n%s\nwant #team degraded", out)
	}
}
