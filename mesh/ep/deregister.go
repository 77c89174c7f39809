package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go/jetstream"
)

// The named refusals of deregister-instance (spec §14).
const (
	RefusalNotRegistered           = "not-registered"
	RefusalInstanceAnswered        = "instance-answered"
	RefusalNotAffirmedGone         = "instance-not-affirmed-gone"
	RefusalLivenessUnestablishable = "liveness-unestablishable"
	RefusalSuperseded              = "superseded"
)

// ErrDeregisterRefused is the sentinel every DeregisterRefusal matches.
var ErrDeregisterRefused = errors.New("deregistration refused")

// DeregisterRefusal says why an instance's records were left in place.
type DeregisterRefusal struct {
	Reason string // one of the Refusal constants
	Detail string
}

func (r *DeregisterRefusal) Error() string { return r.Reason + ": " + r.Detail }

// Unwrap lets errors.Is find ErrDeregisterRefused.
func (r *DeregisterRefusal) Unwrap() error { return ErrDeregisterRefused }

// DescribeTimeout bounds the pinned describe of DeregisterInstance.
const DescribeTimeout = 2 * time.Second

// DeregisterInstance removes a dead instance's registration, and only when: it is registered, a describe pinned to it was not answered, and the broker affirms nobody holds its rail. The spec delete is pinned to the revision read (a move is superseded); the status is kept as an exited tombstone so the epoch still only grows. There is no force and no age sweep.
func (c *Client) DeregisterInstance(ctx context.Context, endpoint, instanceID string) error {
	kv, err := c.records(ctx)
	if err != nil {
		return err
	}
	reg, err := ReadRegistration(ctx, kv, endpoint, instanceID)
	if errors.Is(err, ErrNotRegistered) {
		return &DeregisterRefusal{RefusalNotRegistered, fmt.Sprintf("%s has no registered instance %s", endpoint, instanceID)}
	}
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, DescribeTimeout)
	_, derr := c.Describe(dctx, endpoint, instanceID)
	cancel()
	if derr == nil {
		return &DeregisterRefusal{RefusalInstanceAnswered, fmt.Sprintf("instance %s answered a describe; it is alive", instanceID)}
	}
	if e := proto.AsError(derr); e != nil && e.Code == proto.CodePermissionDenied {
		return &DeregisterRefusal{RefusalLivenessUnestablishable, derr.Error()}
	}
	l, err := c.Probe(ctx, endpoint, instanceID)
	if err != nil {
		return &DeregisterRefusal{RefusalLivenessUnestablishable, err.Error()}
	}
	if l != Gone {
		return &DeregisterRefusal{RefusalNotAffirmedGone, fmt.Sprintf("the broker did not affirm that nobody holds instance %s's rail (describe: %v)", instanceID, derr)}
	}
	specKey, _ := SvcKey(endpoint, instanceID, "spec")
	if err := kv.Delete(ctx, specKey, jetstream.LastRevision(reg.SpecRevision)); err != nil {
		if isWrongSeq(err) {
			return &DeregisterRefusal{RefusalSuperseded, fmt.Sprintf("%s moved past revision %d; the instance re-registered", specKey, reg.SpecRevision)}
		}
		return fmt.Errorf("deleting %s: %w", specKey, err)
	}
	if reg.Status != nil {
		statusKey, _ := SvcKey(endpoint, instanceID, "status")
		b, _ := json.Marshal(SvcStatus{Epoch: reg.Status.Epoch, State: StateExited, ObservedSpecRevision: reg.SpecRevision})
		if _, err := kv.Update(ctx, statusKey, b, reg.StatusRevision); err != nil && !isWrongSeq(err) {
			return fmt.Errorf("marking %s exited: %w", statusKey, err)
		}
	}
	return nil
}
