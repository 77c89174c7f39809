package main

import (
	"strings"
	"testing"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh"
)

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
	printDeliveries(g, []host.Delivery{{Name: "bash1", Presence: "idle"}, {Name: "root", Presence: "operator (you)", Operator: true, Stored: 1,
		Why: "unread: every dashboard shows them; r there (or cotal inbox) reads them"}}, false)
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
