package seat

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep/proto"
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
		outcome proto.Outcome
	}{
		{"outside the read ACL", fmt.Errorf("cannot join %q: %w", "ops", mesh.ErrNotInReadACL), proto.CodePermissionDenied, proto.NotExecuted},
		{"no channel", wire.ValidateChannel("bad..name"), proto.CodeBadRequest, proto.NotExecuted},
		{"a closed connector", mesh.ErrClosed, proto.CodeUnavailable, proto.NotExecuted},
		{"the network", fmt.Errorf("cannot join %q: %w", "team", errors.New("nats: connection closed")), proto.CodeUnavailable, proto.Unknown},
		{"the delivery service's own answer", fmt.Errorf("delivery service: join: %w", proto.Failed(proto.CodeConflict, "raced")), proto.CodeConflict, proto.Executed},
	} {
		e := joinFailure(c.err)
		if e.Code != c.code || e.EffectiveOutcome() != c.outcome {
			t.Errorf("%s: %s (%s), want %s (%s)", c.name, e.Code, e.EffectiveOutcome(), c.code, c.outcome)
		}
	}
}
