package client

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
)

// ManagerStatus is one registered manager as a status scatter found it:
// its own answer, or why there is none.
type ManagerStatus struct {
	InstanceID string `json:"instanceId"`
	Answered   bool   `json:"answered"`
	Epoch      uint64 `json:"epoch,omitempty"`
	Seats      int    `json:"seats"`
	Live       int    `json:"live"`
	// Liveness is the probe's word on a manager that gave no answer:
	// gone (nothing holds its instance rail: the registration is stale)
	// or unknown (it may be slow, hung or unreachable); "" when unprobed.
	Liveness ep.Liveness `json:"liveness,omitempty"`
	// Error is an answer that was a refusal, or no status reply.
	Error string `json:"error,omitempty"`
}

// Managers asks every registered manager for its status at once, with the
// census's deadline and liveness probe, and says of each whether it
// answered (sorted by instance id). A space with no manager registered is
// an empty list; complete is the scatter's word that every one answered.
func (c *Client) Managers(ctx context.Context) (out []ManagerStatus, complete bool, err error) {
	res, err := c.ep.Scatter(ctx, wire.ManagerEndpoint, wire.ManagerStatus, nil, ep.Timeout(censusTimeout), ep.ProbeAfter(censusProbe))
	if res == nil {
		if IsNoManager(err) {
			return nil, true, nil
		}
		return nil, false, err
	}
	for _, r := range res.Replies {
		m := ManagerStatus{InstanceID: r.InstanceID, Epoch: r.Epoch}
		var st StatusReply
		switch {
		case r.Error != nil:
			m.Error = r.Error.Error()
		case json.Unmarshal(r.Data, &st) != nil:
			m.Error = "its answer is not a status reply"
		default:
			m.Answered, m.Seats, m.Live = true, st.Seats, st.Live
		}
		out = append(out, m)
	}
	for _, s := range res.Missing {
		out = append(out, ManagerStatus{InstanceID: s.InstanceID, Epoch: s.Epoch, Liveness: s.Liveness})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].InstanceID < out[j].InstanceID })
	return out, res.Complete && err == nil, err
}
