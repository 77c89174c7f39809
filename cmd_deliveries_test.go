package main

import (
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/seat/client"
)

func TestSeatWhyNamesWhatHoldsTheMessages(t *testing.T) {
	for _, c := range []struct {
		row  client.Row
		want string
	}{
		{client.Row{State: "ready", Injects: true}, ""},
		{client.Row{State: "ready", Injects: true, Waiting: 2, Held: "person typing"}, "held: person typing"},
		{client.Row{State: "starting", Injects: true, Waiting: 1}, "seat starting"},
		{client.Row{State: "ready", Waiting: 1}, "reads its inbox itself"},
		{client.Row{State: "ready", Injects: true, Waiting: 3, PullOnly: 3}, "left for the agent's inbox read"},
		{client.Row{State: "ready", Injects: true, Waiting: 3, PullOnly: 1}, ""},
	} {
		if got := seatWhy(c.row); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("seatWhy(%+v) = %q, want %q", c.row, got, c.want)
		}
	}
}

func TestIdentityWhy(t *testing.T) {
	for _, c := range []struct {
		row  deliveryRow
		want string
	}{
		{deliveryRow{Presence: "idle"}, ""},
		{deliveryRow{Stored: 1, Presence: "offline"}, "offline"},
		{deliveryRow{Taken: 200, Presence: "working"}, "inbox full"},
		{deliveryRow{Stored: 1, Presence: "idle, dnd"}, "not taken yet"},
		{deliveryRow{Taken: 1, Presence: "idle"}, "not yet read"},
	} {
		if got := identityWhy(c.row); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("identityWhy(%+v) = %q, want %q", c.row, got, c.want)
		}
	}
}

func TestHowEndedSaysTheSignal(t *testing.T) {
	for _, c := range []struct {
		process  string
		graceful bool
		want     string
	}{
		{"killed SIGTERM", true, "ended on SIGTERM"},
		{"killed SIGHUP", true, "ended on SIGHUP"},
		{"killed SIGKILL", true, "did not end within 3 s"},
		{"killed SIGKILL", false, "killed at once"},
		{"exited 3", true, "exited with status 3"},
	} {
		if got := howEnded(c.process, c.graceful); !strings.Contains(got, c.want) {
			t.Errorf("howEnded(%q, %v) = %q, want %q", c.process, c.graceful, got, c.want)
		}
	}
}

// TestDeliveriesSaysNothingWaits: a row with nothing waiting says so; its
// seat and why columns said "no answer", as of a manager that was silent.
func TestDeliveriesSaysNothingWaits(t *testing.T) {
	var out strings.Builder
	g := &globals{stdout: &out}
	printDeliveries(g, []deliveryRow{{Name: "bash1", Presence: "idle"}, {Name: "root", Presence: "operator (you)", Operator: true, Stored: 1,
		Why: identityWhy(deliveryRow{Operator: true, Stored: 1})}}, false)
	s := out.String()
	if strings.Contains(s, "no answer") || !strings.Contains(s, "nothing waits") || strings.Contains(s, "offline") ||
		!strings.Contains(s, "every dashboard shows them") {
		t.Errorf("deliveries:\n%s", s)
	}
}

// TestSendErrorOfAnUnconfirmedSendSaysHowToRetry: a send the mesh did not
// acknowledge says it may be stored, its id, and that a send again with
// --id stores it once.
func TestSendErrorOfAnUnconfirmedSendSaysHowToRetry(t *testing.T) {
	err := sendError(&mesh.NotConfirmedError{ID: "abc-1", What: "post to #team", Why: "the mesh stopped before acknowledging"})
	want := "post to #team not confirmed: the mesh stopped before acknowledging; it may be stored, id abc-1; send it again with --id abc-1 and the mesh stores it once"
	if err == nil || err.Error() != want {
		t.Fatalf("sendError: %v\nwant %s", err, want)
	}
}
