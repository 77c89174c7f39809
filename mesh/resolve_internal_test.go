package mesh

import (
	"context"
	"errors"
	"testing"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// replayEndingOnRead is a roster whose first replay ends the moment its
// roster is first read: the read saw nobody, the view after it is current
// with alice on it.
type replayEndingOnRead struct{ ended bool }

func (r *replayEndingOnRead) Roster() []presence.Peer {
	if !r.ended {
		r.ended = true
		return nil
	}
	return []presence.Peer{{ID: "local.alice", Name: "alice"}}
}

func (r *replayEndingOnRead) View() presence.View {
	if r.ended {
		return presence.View{State: presence.Current, Fresh: true}
	}
	return presence.View{State: presence.Unpopulated}
}

func (r *replayEndingOnRead) Changes() <-chan struct{} { return nil }

// A DM target looked up while the presence replay is still running is
// never refused as "no peer" on the strength of a view that turned current
// after the roster was read (a cluster's slow replay ending while the
// identity records are asked): the refusal says the view could not be
// verified, which tells the sender to retry.
func TestNoPeerRestsOnAViewCurrentBeforeTheRoster(t *testing.T) {
	e := &Endpoint{space: "s", me: wire.Principal{Owner: "local", Actor: "bob"}, inbox: newInbox(), mediated: true}
	e.remote.once.Do(func() {})
	e.remote.err = errors.New("this test has no delivery service: no identity records")
	for _, to := range []string{"local.alice", "alice"} {
		_, err := e.resolveOn(context.Background(), &replayEndingOnRead{}, to)
		if errors.Is(err, ErrNoPeer) || !errors.Is(err, ErrUnverifiable) {
			t.Errorf("resolving %q during the replay: %v, want a refusal saying the view is unverified", to, err)
		}
	}
	if got, err := e.resolveOn(context.Background(), &replayEndingOnRead{ended: true}, "alice"); err != nil || got.ID.ID() != "local.alice" {
		t.Errorf("resolving alice after the replay: %+v, %v", got, err)
	}
}
