package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	all, err := snapshotRegistrations(ctx, kv, endpoint)
	if err != nil {
		return nil, err
	}
	out := make([]Registration, 0, len(all))
	for _, r := range all {
		if r.SpecRevision > 0 {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b Registration) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	return out, nil
}

// snapshotRegistrations reads the last spec and status record of every
// instance of endpoint in one pass: one watch of the endpoint's svc keys,
// delivering each key's last entry, delete markers included, instead of a
// listing and two reads per instance. An instance whose spec was deleted
// is there with Deregistered set; one never registered is absent.
func snapshotRegistrations(ctx context.Context, kv jetstream.KeyValue, endpoint string) (map[string]*Registration, error) {
	tok, err := proto.EndpointToken(endpoint)
	if err != nil {
		return nil, err
	}
	w, err := kv.WatchFiltered(ctx, []string{"svc." + tok + ".*.spec", "svc." + tok + ".*.status"})
	if err != nil {
		return nil, fmt.Errorf("reading the svc records of %s: %w", endpoint, err)
	}
	defer func() { _ = w.Stop() }()
	out := map[string]*Registration{}
	for {
		var e jetstream.KeyValueEntry
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("reading the svc records of %s: %w", endpoint, ctx.Err())
		case e = <-w.Updates():
		}
		if e == nil {
			return out, nil // caught up
		}
		parts := strings.Split(e.Key(), ".")
		if len(parts) != 4 {
			continue
		}
		r := out[parts[2]]
		if r == nil {
			r = &Registration{InstanceID: parts[2]}
			out[parts[2]] = r
		}
		put := e.Operation() == jetstream.KeyValuePut
		switch parts[3] {
		case "spec":
			r.Deregistered = !put
			if put {
				if err := json.Unmarshal(e.Value(), &r.Spec); err != nil {
					return nil, fmt.Errorf("reading %s: %w", e.Key(), err)
				}
				r.SpecRevision = e.Revision()
			}
		case "status":
			if put {
				var st SvcStatus
				if err := json.Unmarshal(e.Value(), &st); err != nil {
					return nil, fmt.Errorf("reading %s: %w", e.Key(), err)
				}
				r.Status, r.StatusRevision = &st, e.Revision()
			}
		}
	}
}
