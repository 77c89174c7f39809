package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go/jetstream"
)

// The states a svc status record can hold.
const (
	StateReady     = "ready"
	StateExited    = "exited"
	StateEscalated = "escalated"
)

// SvcSpec is svc.<e>.<iid>.spec: the registration. Its store revision is the registration revision; deleting it is the deregistration.
type SvcSpec struct {
	Endpoint       string          `json:"endpoint"`
	Owner          string          `json:"owner"`
	EndpointType   string          `json:"endpointType,omitempty"`
	ClusterDigests []string        `json:"clusterDigests"`
	Protocol       proto.Protocol  `json:"protocol"`
	Activation     json.RawMessage `json:"activation,omitempty"`
}

// SvcStatus is svc.<e>.<iid>.status, epoch-fenced: the epoch only ever grows, by CAS.
type SvcStatus struct {
	Epoch                uint64 `json:"epoch"`
	State                string `json:"state"`
	ObservedSpecRevision uint64 `json:"observedSpecRevision"`
}

// SvcKey is svc.<endpoint token>.<iid>.<leaf>, leaf spec or status.
func SvcKey(endpoint, instanceID, leaf string) (string, error) {
	tok, err := proto.EndpointToken(endpoint)
	if err != nil {
		return "", err
	}
	if _, err := proto.IDToken("instance id", instanceID); err != nil {
		return "", err
	}
	return "svc." + tok + "." + instanceID + "." + leaf, nil
}

// Registration is one instance's records as read: SpecRevision is the registration revision, zero when the spec is absent.
type Registration struct {
	InstanceID     string
	Spec           SvcSpec
	SpecRevision   uint64
	Deregistered   bool // the spec was deleted (a delete marker), as opposed to never written
	Status         *SvcStatus
	StatusRevision uint64
}

// ErrNotRegistered is returned when an instance has no svc spec record.
var ErrNotRegistered = errors.New("instance not registered")

// ReadRegistration reads one instance's spec and status.
func ReadRegistration(ctx context.Context, kv jetstream.KeyValue, endpoint, instanceID string) (Registration, error) {
	r := Registration{InstanceID: instanceID}
	specKey, err := SvcKey(endpoint, instanceID, "spec")
	if err != nil {
		return r, err
	}
	statusKey, _ := SvcKey(endpoint, instanceID, "status")
	e, err := kv.Get(ctx, specKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		// Get hides delete markers; the history tells a deregistration from a record never written.
		if h, herr := kv.History(ctx, specKey); herr == nil && len(h) > 0 && h[len(h)-1].Operation() != jetstream.KeyValuePut {
			r.Deregistered = true
			return r, fmt.Errorf("%s: %w (deregistered)", specKey, ErrNotRegistered)
		}
		return r, fmt.Errorf("%s: %w", specKey, ErrNotRegistered)
	case err != nil:
		return r, fmt.Errorf("reading %s: %w", specKey, err)
	}
	if err := json.Unmarshal(e.Value(), &r.Spec); err != nil {
		return r, fmt.Errorf("reading %s: %w", specKey, err)
	}
	r.SpecRevision = e.Revision()
	st, err := kv.Get(ctx, statusKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
	case err != nil:
		return r, fmt.Errorf("reading %s: %w", statusKey, err)
	default:
		var s SvcStatus
		if err := json.Unmarshal(st.Value(), &s); err != nil {
			return r, fmt.Errorf("reading %s: %w", statusKey, err)
		}
		r.Status, r.StatusRevision = &s, st.Revision()
	}
	return r, nil
}

// ListRegistrations reads every registered instance of endpoint; an instance whose spec is gone is not listed.
func ListRegistrations(ctx context.Context, kv jetstream.KeyValue, endpoint string) ([]Registration, error) {
	tok, err := proto.EndpointToken(endpoint)
	if err != nil {
		return nil, err
	}
	lister, err := kv.ListKeysFiltered(ctx, "svc."+tok+".*.spec")
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing svc records of %s: %w", endpoint, err)
	}
	var ids []string
	for k := range lister.Keys() {
		parts := strings.Split(k, ".")
		if len(parts) == 4 {
			ids = append(ids, parts[2])
		}
	}
	out := make([]Registration, 0, len(ids))
	for _, iid := range ids {
		r, err := ReadRegistration(ctx, kv, endpoint, iid)
		if errors.Is(err, ErrNotRegistered) {
			continue // deregistered between list and read
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
