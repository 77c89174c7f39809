package host

import (
	"strings"
	"testing"

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
		row  Delivery
		want string
	}{
		{Delivery{Presence: "idle"}, ""},
		{Delivery{Stored: 1, Presence: "offline"}, "offline"},
		{Delivery{Taken: 200, Presence: "working"}, "inbox full"},
		{Delivery{Stored: 1, Presence: "idle, dnd"}, "not taken yet"},
		{Delivery{Taken: 1, Presence: "idle"}, "not yet read"},
	} {
		if got := identityWhy(c.row); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("identityWhy(%+v) = %q, want %q", c.row, got, c.want)
		}
	}
}
