package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	fastjson "github.com/segmentio/encoding/json"
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

	specSeq uint64 // the store sequence of the spec key's last entry, a deletion's too
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
	return listRegistrations(ctx, kv, nil, endpoint)
}

// listRegistrations is ListRegistrations, read in one direct request over
// nc when it is not nil and the server answers one.
func listRegistrations(ctx context.Context, kv jetstream.KeyValue, nc *nats.Conn, endpoint string) ([]Registration, error) {
	all, err := snapshotRegistrations(ctx, kv, nc, endpoint, readAll)
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
// instance of endpoint in one pass, delete markers included, instead of a
// listing and two reads per instance: with nc, one direct get of the
// last entry of each matching key (JetStream's multi_last); without it,
// or where the server cannot answer that, one watch of the endpoint's svc
// keys, which delivers the same. An instance whose spec was deleted is
// there with Deregistered set; one never registered is absent.
//
// read says how much: a scatter's freeze needs no spec's body, and its
// reconcile no status at all.
func snapshotRegistrations(ctx context.Context, kv jetstream.KeyValue, nc *nats.Conn, endpoint string, read recordRead) (map[string]*Registration, error) {
	tok, err := proto.EndpointToken(endpoint)
	if err != nil {
		return nil, err
	}
	filters := []string{"svc." + tok + ".*.spec"}
	if read != readRevisions {
		filters = append(filters, "svc."+tok+".*.status")
	}
	out := map[string]*Registration{}
	if nc != nil {
		entries, err := lastEntries(ctx, nc, kv.Bucket(), filters)
		if err == nil {
			for _, e := range entries {
				if err := addRegistration(out, e.key, e.op == jetstream.KeyValuePut, e.rev, e.value, read); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		if !errors.Is(err, errNoDirectGet) {
			return nil, fmt.Errorf("reading the svc records of %s: %w", endpoint, err)
		}
	}
	w, err := kv.WatchFiltered(ctx, filters)
	if err != nil {
		return nil, fmt.Errorf("reading the svc records of %s: %w", endpoint, err)
	}
	defer func() { _ = w.Stop() }()
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
		if err := addRegistration(out, e.Key(), e.Operation() == jetstream.KeyValuePut, e.Revision(), e.Value(), read); err != nil {
			return nil, err
		}
	}
}

// recordRead is how much of the svc records snapshotRegistrations reads.
type recordRead int

const (
	readAll       recordRead = iota // specs and statuses, decoded
	readStatus                      // statuses decoded; specs only checked to be JSON
	readRevisions                   // specs' revisions alone, checked to be JSON
)

// addRegistration folds one svc key's last entry into out, as much of it
// as read asks for.
func addRegistration(out map[string]*Registration, key string, put bool, rev uint64, value []byte, read recordRead) error {
	rest, ok := strings.CutPrefix(key, "svc.")
	if !ok {
		return nil
	}
	_, rest, _ = strings.Cut(rest, ".")
	iid, kind, ok := strings.Cut(rest, ".")
	if !ok || iid == "" || strings.Contains(kind, ".") {
		return nil
	}
	r := out[iid]
	if r == nil {
		r = &Registration{InstanceID: iid}
		out[iid] = r
	}
	switch kind {
	case "spec":
		r.Deregistered, r.specSeq = !put, rev
		if put {
			if read == readAll {
				if err := json.Unmarshal(value, &r.Spec); err != nil {
					return fmt.Errorf("reading %s: %w", key, err)
				}
			} else if !fastjson.Valid(value) {
				return fmt.Errorf("reading %s: not JSON", key)
			}
			r.SpecRevision = rev
		}
	case "status":
		if put {
			var st SvcStatus
			if err := fastjson.Unmarshal(value, &st); err != nil {
				return fmt.Errorf("reading %s: %w", key, err)
			}
			r.Status, r.StatusRevision = &st, rev
		}
	}
	return nil
}

// lastSpecSeq is the store sequence of the newest entry on any svc spec
// key of endpoint (a put or a deletion), read in one direct get; ok is
// false when the server cannot say (no direct gets, no such entry).
func lastSpecSeq(ctx context.Context, nc *nats.Conn, bucket, endpoint string) (seq uint64, ok bool) {
	tok, err := proto.EndpointToken(endpoint)
	if err != nil {
		return 0, false
	}
	body, _ := json.Marshal(struct {
		LastBySubject string `json:"last_by_subj"`
	}{"$KV." + bucket + ".svc." + tok + ".*.spec"})
	m, err := nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET.KV_"+bucket, body)
	if err != nil || m.Header.Get("Status") != "" {
		return 0, false
	}
	seq, err = strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
	return seq, err == nil
}

// kvEntry is one key's last entry as a direct get gives it.
type kvEntry struct {
	key   string
	rev   uint64
	op    jetstream.KeyValueOp
	value []byte
}

// errNoDirectGet is lastEntries' answer when the server does not answer a
// direct multi_last get on the bucket (no direct gets on its stream, a
// server older than 2.11, or more matching keys than one batch holds);
// the caller reads another way.
var errNoDirectGet = errors.New("the server answers no direct multi-key get on this bucket")

// lastEntries reads the last entry of every key of bucket matching the
// filters in one direct get request: the entries stream to this get's
// token of the connection's shared batch inbox (batches) and end with an
// end-of-batch status. A direct get may be
// answered by any replica of the bucket, as a kv.Get is.
func lastEntries(ctx context.Context, nc *nats.Conn, bucket string, filters []string) ([]kvEntry, error) {
	prefix := "$KV." + bucket + "."
	req := struct {
		MultiLast []string `json:"multi_last"`
	}{}
	for _, f := range filters {
		req.MultiLast = append(req.MultiLast, prefix+f)
	}
	body, _ := json.Marshal(req)
	inbox, ch, forget, err := batchesFor(nc).open(64)
	if err != nil {
		return nil, err
	}
	defer forget()
	if err := nc.PublishRequest("$JS.API.DIRECT.GET.KV_"+bucket, inbox, body); err != nil {
		return nil, err
	}
	var out []kvEntry
	for {
		var m *nats.Msg
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case m = <-ch:
		}
		switch st := m.Header.Get("Status"); st {
		case "":
		case "204": // end of batch
			return out, nil
		case "404": // no key matches
			return out, nil
		case "503", "408", "413":
			// No direct-get responder, a server that does not know
			// multi_last, or more keys than it answers in one batch.
			return nil, errNoDirectGet
		default:
			return nil, fmt.Errorf("direct get on %s: status %s %s", bucket, st, m.Header.Get("Description"))
		}
		subj := m.Header.Get("Nats-Subject")
		key, ok := strings.CutPrefix(subj, prefix)
		if !ok {
			return nil, fmt.Errorf("direct get on %s answered for %q", bucket, subj)
		}
		seq, err := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("direct get on %s: entry %s has no sequence", bucket, key)
		}
		e := kvEntry{key: key, rev: seq, op: jetstream.KeyValuePut, value: m.Data}
		switch m.Header.Get("KV-Operation") {
		case "DEL":
			e.op = jetstream.KeyValueDelete
		case "PURGE":
			e.op = jetstream.KeyValuePurge
		}
		out = append(out, e)
	}
}
