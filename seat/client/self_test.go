package client_test

import (
	"testing"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/client"
)

// TestSelfCallsActOnTheCallersOwnSeat: with the seat's own credential the
// self calls set its presence (the census shows it), join and leave a
// channel and read its inbox; the operator, not a seat, is refused.
func TestSelfCallsActOnTheCallersOwnSeat(t *testing.T) {
	h := startMesh(t, host.Config{})
	h.agentFile("shell", "---\nname: shell\nagent: command\ncommand: sh\nallowSubscribe: [ops]\n---\n")
	sp := h.up(h.c, "shell", "", h.iid)
	me := h.asSeat(sp).Self(h.iid)

	activity := "testing the client"
	set, err := me.SetStatus(ctxT(t), client.StatusArgs{Status: "working", Activity: &activity})
	if err != nil || set.Status != "working" || set.Activity != activity {
		t.Fatalf("set-status: %+v %v", set, err)
	}
	r, err := h.c.Locate(ctxT(t), sp.Name, "")
	if err != nil || r.Mesh != "working" || r.Activity != activity {
		t.Fatalf("the census after set-status: %+v %v", r, err)
	}
	// Status alone keeps the activity.
	if set, err = me.SetStatus(ctxT(t), client.StatusArgs{Status: "idle"}); err != nil || set.Status != "idle" || set.Activity != activity {
		t.Fatalf("set-status idle: %+v %v", set, err)
	}

	j, err := me.Join(ctxT(t), "ops")
	if err != nil || !j.Joined || j.Summary == "" {
		t.Fatalf("join: %+v %v", j, err)
	}
	for _, want := range []bool{true, false} {
		if left, err := me.Leave(ctxT(t), "ops"); err != nil || left != want {
			t.Fatalf("leave: %v %v, want %v", left, err, want)
		}
	}
	items, err := me.Inbox(ctxT(t), false)
	if err != nil || items == nil || len(items) != 0 {
		t.Fatalf("inbox of a fresh seat: %#v %v, want empty", items, err)
	}

	if _, err := h.c.Self(h.iid).Inbox(ctxT(t), true); proto.AsError(err) == nil {
		t.Fatalf("the operator's self call: %v, want a refusal", err)
	}
}
