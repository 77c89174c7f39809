package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/cotal-go/cotal/mesh/wire"
)

// CommandGoalResult reads a goal's terminal fact back for the caller's own triple.
const CommandGoalResult = "goal-result"

const goalResultInput = `{"type":"object","additionalProperties":false,"required":["goalId"],"properties":{"goalId":{"type":"string","pattern":"^[A-Za-z0-9_-]{1,64}$"}}}`

const goalResultOutput = `{"type":"object","additionalProperties":false,"required":["goalId"],"properties":{"goalId":{"type":"string"},"result":{"type":"object","required":["goalId","fingerprint","state"]}}}`

// GoalResultAnswer is the data of goal-result: Result is absent while the goal has no terminal fact.
type GoalResultAnswer struct {
	GoalID string      `json:"goalId"`
	Result *GoalResult `json:"result,omitempty"`
}

// GoalResultCommand is the goal-result command for any server whose commands start goals: {goalId} → {goalId, result?}, scoped to the caller's own triple by the subject, answerable by any instance (facts are not per epoch).
func GoalResultCommand() Command {
	return Command{
		Name:       CommandGoalResult,
		Capability: "goal-result",
		Input:      json.RawMessage(goalResultInput),
		Output:     json.RawMessage(goalResultOutput),
		Handler: func(ctx context.Context, c *Call) (any, *proto.Error) {
			var in struct {
				GoalID string `json:"goalId"`
			}
			if e := c.Decode(&in); e != nil {
				return nil, e
			}
			s := c.server
			subj, err := proto.GoalResultSubject(s.opts.Space, s.opts.Endpoint, c.Caller(), in.GoalID)
			if err != nil {
				return nil, proto.Refuse(proto.CodeBadRequest, "%v", err)
			}
			read, err := validOnSubject(ctx, s.nc, wire.EPFStream(s.opts.Space), subj, validResult(in.GoalID))
			if read.skipped > 0 {
				s.logf("%s holds %d message(s) that are not a valid fact; they are skipped", subj, read.skipped)
			}
			if errors.Is(err, ErrNoMessage) {
				return GoalResultAnswer{GoalID: in.GoalID}, nil
			}
			if err != nil {
				return nil, proto.Failed(proto.CodeUnavailable, "reading goal %s: %v", in.GoalID, err)
			}
			var r GoalResult
			_ = json.Unmarshal(read.data, &r)
			return GoalResultAnswer{GoalID: in.GoalID, Result: &r}, nil
		},
	}
}

// GoalResult asks an endpoint for the terminal fact of one of the caller's goals; ok is false while there is none yet.
func (c *Client) GoalResult(ctx context.Context, endpoint, goalID string, opts ...CallOption) (r GoalResult, ok bool, err error) {
	res, err := c.Call(ctx, endpoint, CommandGoalResult, map[string]string{"goalId": goalID}, opts...)
	if err != nil {
		return GoalResult{}, false, err
	}
	var a GoalResultAnswer
	if err := json.Unmarshal(res.Data, &a); err != nil {
		return GoalResult{}, false, fmt.Errorf("ep: goal-result answer: %w", err)
	}
	if a.Result == nil {
		return GoalResult{}, false, nil
	}
	return *a.Result, true, nil
}

// Uncertain is the data of a goal that ended uncertain: why neither
// outcome could be told within its bound.
type Uncertain struct {
	Reason string `json:"reason"`
}
