package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// PresenceTTL is the presence bucket's TTL (spec: 6000 ms), reconciled on
// every provisioning.
const PresenceTTL = 6 * time.Second

// DeliveryLeaseTTL is the delivery lease bucket's TTL.
const DeliveryLeaseTTL = 30 * time.Second

// StreamConfigs are the space's streams as the spec names them. CHAT keeps
// 1000 messages per (sender, channel) subject; the backstop streams keep
// 1000 per member lifecycle with a 2 h dedup window. The streams agents
// publish to (CHAT, DM, TASK) acknowledge nothing: see storedNotices. Every
// stream an agent can fill, directly or through what it makes the trusted
// services write, holds at most its share of a store of maxStore bytes
// (streamShare), so agents filling theirs leave the trusted buckets and
// streams room to serve.
func StreamConfigs(space string, maxStore int64) []jetstream.StreamConfig {
	two := 2 * time.Minute
	cfgs := []jetstream.StreamConfig{
		{Name: wire.ChatStream(space), Subjects: []string{wire.ChatSubjects(space)}, Storage: jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy, MaxMsgsPerSubject: 1000, Discard: jetstream.DiscardOld, Duplicates: two, AllowDirect: true},
		{Name: wire.DMStream(space), Subjects: []string{wire.DMSubjects(space)}, Storage: jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, Duplicates: two},
		// Full, the work queue refuses new tasks rather than drop pending ones.
		{Name: wire.TaskStream(space), Subjects: []string{wire.TaskSubjects(space)}, Storage: jetstream.FileStorage,
			Retention: jetstream.WorkQueuePolicy, Discard: jetstream.DiscardNew, Duplicates: two},
		{Name: wire.InboxStream(space), Subjects: []string{wire.InboxSubjects(space)}, Storage: jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy, MaxMsgsPerSubject: 1000, Discard: jetstream.DiscardOld, Duplicates: 2 * time.Hour},
		{Name: wire.DlvStream(space), Subjects: []string{wire.DlvSubjects(space)}, Storage: jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy, MaxMsgsPerSubject: 1000, Discard: jetstream.DiscardOld, Duplicates: 2 * time.Hour},
		{Name: wire.EPFStream(space), Subjects: []string{wire.EPFSubjects(space)}, Storage: jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, Duplicates: two},
		{Name: wire.EPEStream(space), Subjects: []string{wire.EPESubjects(space)}, Storage: jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy, MaxMsgsPerSubject: 1000, Discard: jetstream.DiscardOld, Duplicates: two},
		{Name: wire.EPCStream(space), Subjects: []string{wire.EPCSubjects(space)}, Storage: jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy, Duplicates: two, DenyDelete: true, DenyPurge: true},
	}
	for i := range cfgs {
		storedNotices(space, &cfgs[i])
		if n := streamShare(space, cfgs[i].Name); n > 0 {
			cfgs[i].MaxBytes = max(storeBudget(maxStore)/n, minStreamBytes)
		}
	}
	return cfgs
}

// DefaultStoreBudget is the store size the stream limits are cut from when
// the store's own limit is not known (a mesh on a server cotal did not
// start).
const DefaultStoreBudget = 8 << 30

// minStreamBytes is the least a stream agents can fill may hold, however
// small the store.
const minStreamBytes = 1 << 20

func storeBudget(maxStore int64) int64 {
	if maxStore <= 0 {
		return DefaultStoreBudget
	}
	return maxStore
}

// streamShare is the denominator of a stream's share of the store when an
// agent can fill it: CHAT and DM an eighth each, TASK, INBOX and DLV a
// sixteenth, the goal facts and events a thirty-second: half the store in
// all; the membership buckets take another sixteenth (BucketConfigs). The
// other buckets and EPC, which only trusted parts write and which are
// small, share the rest: JetStream reserves a bounded stream's bytes, so
// what agents fill never takes the room of the leases, identity records,
// ACL rows and contracts. 0: the stream has no byte limit.
func streamShare(space, stream string) int64 {
	switch stream {
	case wire.ChatStream(space), wire.DMStream(space):
		return 8
	case wire.TaskStream(space), wire.InboxStream(space), wire.DlvStream(space):
		return 16
	case wire.EPFStream(space), wire.EPEStream(space):
		return 32
	}
	return 0
}

// storedNotices makes a stream that takes agents' publishes answer none of
// them: JetStream sends a PubAck to whatever reply subject the publisher
// named, from inside the account and past the publisher's own rights, and
// stored on a bucket key or a stream subject it replaces what is there (a
// lease, an identity record, a contract). Instead the stream republishes
// the headers of every message it stores on the sender's stored-notice
// subject (wire.StoredFilter), which only the sender may read: that is the
// sender's "stored seq N". Streams only trusted parts publish to keep
// their acks.
func storedNotices(space string, cfg *jetstream.StreamConfig) {
	src, dst, ok := wire.StoredRepublish(space, cfg.Name)
	if !ok {
		return
	}
	cfg.NoAck = true
	cfg.RePublish = &jetstream.RePublish{Source: src, Destination: dst, HeadersOnly: true}
}

// acknowledgesAgents reports whether an existing stream that takes agents'
// publishes still answers them (a store provisioned before stored notices).
func acknowledgesAgents(space string, have jetstream.StreamConfig) bool {
	want := have
	storedNotices(space, &want)
	return have.NoAck != want.NoAck || !reflect.DeepEqual(have.RePublish, want.RePublish)
}

// BucketConfigs are the space's KV buckets. Presence is in memory: it is
// rewritten every 2 s and worthless after 6 s, so it must not cost fsyncs.
// The two membership buckets grow with what agents join, so each holds at
// most a thirty-second of a store of maxStore bytes (the membership feed
// no more than 64 MiB); a full one refuses new rows and loses none.
func BucketConfigs(space string, maxStore int64) []jetstream.KeyValueConfig {
	share := max(storeBudget(maxStore)/32, minStreamBytes)
	return []jetstream.KeyValueConfig{
		{Bucket: wire.PresenceBucket(space), TTL: PresenceTTL, History: 1, Storage: jetstream.MemoryStorage},
		{Bucket: wire.ChannelsBucket(space), History: 1, Storage: jetstream.FileStorage},
		{Bucket: wire.MembersBucket(space), History: 1, MaxBytes: share, Storage: jetstream.FileStorage},
		{Bucket: wire.RecordsBucket(space), History: 1, Storage: jetstream.FileStorage},
		{Bucket: wire.ACLBucket(space), History: 1, Storage: jetstream.FileStorage},
		{Bucket: wire.MembershipBucket(space), History: 1, MaxBytes: min(share, 64<<20), Storage: jetstream.FileStorage},
		{Bucket: wire.DeliveryBucket(space), TTL: DeliveryLeaseTTL, History: 1, Storage: jetstream.FileStorage},
		{Bucket: wire.AuthBucket(space), History: 1, Storage: jetstream.FileStorage},
	}
}

// ChannelDefaults is the `=defaults` record of the channel registry.
type ChannelDefaults struct {
	Replay        *bool  `json:"replay,omitempty"`
	ReplayWindow  string `json:"replayWindow,omitempty"`
	DeliveryClass string `json:"deliveryClass,omitempty"`
}

// DefaultsKey is the registry key holding ChannelDefaults.
const DefaultsKey = "=defaults"

// Provision creates every stream and bucket the space needs, the streams
// agents can fill bounded by their shares of a store of maxStore bytes (0:
// DefaultStoreBudget). It is idempotent: what exists is kept as it is (an
// operator's retention edits survive a restart), except the presence TTL,
// stored notices and a missing byte limit, which are reconciled. What it
// creates has Replicas(nc) copies: one on the embedded server, up to three
// on a cluster.
func Provision(ctx context.Context, nc *nats.Conn, space string, open bool, maxStore int64) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if err := ensureAll(ctx, js, nc, space, maxStore); err != nil {
		return err
	}
	if err := noDirect(ctx, js, "KV_"+wire.AuthBucket(space)); err != nil {
		return err
	}
	class := "durable"
	if open {
		class = "live"
	}
	reg, err := js.KeyValue(ctx, wire.ChannelsBucket(space))
	if err != nil {
		return err
	}
	b, _ := json.Marshal(ChannelDefaults{DeliveryClass: class})
	if _, err := reg.Create(ctx, DefaultsKey, b); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("writing channel defaults: %w", err)
	}
	return nil
}

// ensureAll makes every stream and bucket of the space that is missing and
// reconciles the rest, side by side.
func ensureAll(ctx context.Context, js jetstream.JetStream, nc *nats.Conn, space string, maxStore int64) error {
	// Streams and buckets are independent: create them side by side, so
	// a fresh space costs one round of fsyncs rather than sixteen.
	streams, buckets := StreamConfigs(space, maxStore), BucketConfigs(space, maxStore)
	replicas := Replicas(nc)
	for i := range streams {
		streams[i].Replicas = replicas
	}
	for i := range buckets {
		buckets[i].Replicas = replicas
	}
	var fns []func() error
	for _, cfg := range streams {
		fns = append(fns, func() error { return ensureStream(ctx, js, space, cfg) })
	}
	for _, cfg := range buckets {
		fns = append(fns, func() error { return ensureBucket(ctx, js, cfg, cfg.Bucket == wire.PresenceBucket(space)) })
	}
	return concurrently(fns...)
}

// noDirect turns direct gets off on a stream (the auth bucket must only be
// read through the stream leader's API, never served from any replica).
func noDirect(ctx context.Context, js jetstream.JetStream, name string) error {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return err
	}
	cfg := s.CachedInfo().Config
	if !cfg.AllowDirect {
		return nil
	}
	cfg.AllowDirect = false
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("turning off direct get on %s: %w", name, err)
	}
	return nil
}

// ensureStream creates a stream unless it exists; an existing one is kept
// as it is (an operator's retention edits survive a restart), except that a
// stream agents publish to is made to stop acknowledging them, and one
// agents can fill that has no byte limit gets its share.
func ensureStream(ctx context.Context, js jetstream.JetStream, space string, cfg jetstream.StreamConfig) error {
	s, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		err := withReplicas(ctx, &cfg.Replicas, func() error {
			_, err := js.CreateStream(ctx, cfg)
			return err
		})
		if err != nil {
			return fmt.Errorf("creating stream %s: %w", cfg.Name, err)
		}
		return nil
	} else if err != nil {
		return fmt.Errorf("reading stream %s: %w", cfg.Name, err)
	}
	have := s.CachedInfo().Config
	unbounded := have.MaxBytes <= 0 && cfg.MaxBytes > 0
	if !acknowledgesAgents(space, have) && !unbounded {
		return nil
	}
	storedNotices(space, &have)
	if unbounded {
		have.MaxBytes = cfg.MaxBytes
	}
	if _, err := js.UpdateStream(ctx, have); err != nil {
		return fmt.Errorf("bounding stream %s and making it stop acknowledging publishers: %w", cfg.Name, err)
	}
	return nil
}

// ensureBucket creates a bucket unless it exists; reconcileTTL makes an
// existing bucket's TTL the configured one (the presence bucket's is).
func ensureBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig, reconcileTTL bool) error {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		err := withReplicas(ctx, &cfg.Replicas, func() error {
			_, err := js.CreateKeyValue(ctx, cfg)
			return err
		})
		if err != nil {
			return fmt.Errorf("creating bucket %s: %w", cfg.Bucket, err)
		}
	case err != nil:
		return fmt.Errorf("reading bucket %s: %w", cfg.Bucket, err)
	case reconcileTTL:
		st, err := kv.Status(ctx)
		if err != nil {
			return err
		}
		if st.TTL() != cfg.TTL {
			if _, err := js.UpdateKeyValue(ctx, cfg); err != nil {
				return fmt.Errorf("reconciling the TTL of %s: %w", cfg.Bucket, err)
			}
		}
	}
	return nil
}
