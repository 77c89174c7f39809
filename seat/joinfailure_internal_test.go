package seat

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
)

// A seat's failed join is "permission denied" only when the channel is
// outside its read ACL: a closed connector or a mesh that does not answer
// is no refusal of the caller.
func TestJoinFailureSaysWhatFailed(t *testing.T) {
	for _, c := range []struct {
		name    string
		err     error
		code    string
		outcome ep.Outcome
	}{
		{"outside the read ACL", fmt.Errorf("cannot join %q: %w", "ops", mesh.ErrNotInReadACL), ep.CodePermissionDenied, ep.NotExecuted},
		{"no channel", wire.ValidateChannel("bad..name"), ep.CodeBadRequest, ep.NotExecuted},
		{"a closed connector", mesh.ErrClosed, ep.CodeUnavailable, ep.NotExecuted},
		{"the network", fmt.Errorf("cannot join %q: %w", "team", errors.New("nats: connection closed")), ep.CodeUnavailable, ep.Unknown},
		{"the delivery service's own answer", fmt.Errorf("delivery service: join: %w", ep.Failed(ep.CodeConflict, "raced")), ep.CodeConflict, ep.Executed},
	} {
		e := joinFailure(c.err)
		if e.Code != c.code || e.EffectiveOutcome() != c.outcome {
			t.Errorf("%s: %s (%s), want %s (%s)", c.name, e.Code, e.EffectiveOutcome(), c.code, c.outcome)
		}
	}
}
