package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// AckWait is the redelivery timeout of every durable the space pre-creates.
const AckWait = 60 * time.Second

// IdentityRecord is the space's registry row of a minted identity; it lets a
// sender reach an identity that has never connected (its DM durable exists
// from the moment of mint) and the trusted services tell a live lifecycle.
type IdentityRecord = wire.IdentityRecord

// ProvisionIdentity pre-creates what an identity binds (its DM and
// backstop durables, its role's shared queue) and records it in the
// space's registry, so a DM sent before its first connect waits for it.
// Agents have no right to create consumers; this runs as the operator.
//
// Every step is idempotent, so a run an account update interrupts (see
// RetryNoResponders) is made again whole.
func ProvisionIdentity(ctx context.Context, nc *nats.Conn, id Identity) error {
	if err := id.Normalize(); err != nil {
		return err
	}
	return RetryNoResponders(ctx, func() error { return provisionIdentity(ctx, nc, id) })
}

func provisionIdentity(ctx context.Context, nc *nats.Conn, id Identity) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	s, p := id.Space, id.Principal
	dms := id.Profile != wire.ProfileObserver // an observer has no DMs
	// What is read first is read at once: the ACL row (has this lifecycle
	// ended?), the DM stream's last sequence, the records bucket.
	var (
		acl, kv jetstream.KeyValue
		ended   bool
		dmLast  uint64
	)
	err = concurrently(
		func() error {
			var err error
			if acl, err = js.KeyValue(ctx, wire.ACLBucket(s)); err != nil {
				return fmt.Errorf("ACL bucket of %s: %w", s, err)
			}
			// A lifecycle that has ended stays ended: `up` provisions every
			// identity ever minted, and must not bring an ended one's
			// backstop or read ACL back.
			if ended, err = lifecycleEnded(ctx, acl, wire.ACLKey(p, id.UID)); err != nil {
				return fmt.Errorf("reading the read ACL of %s: %w", p, err)
			}
			return nil
		},
		func() error {
			if !dms {
				return nil
			}
			dm, err := js.Stream(ctx, wire.DMStream(s))
			if err != nil {
				return fmt.Errorf("DM stream of %s: %w (is the mesh provisioned?)", s, err)
			}
			dmLast = dm.CachedInfo().State.LastSeq
			return nil
		},
		func() error {
			var err error
			if kv, err = js.KeyValue(ctx, wire.RecordsBucket(s)); err != nil {
				return fmt.Errorf("records bucket of %s: %w", s, err)
			}
			return nil
		},
	)
	if err != nil {
		return err
	}
	// The durables are independent of each other: made at once.
	var durables []func() error
	if dms {
		durables = append(durables, func() error {
			return ensureConsumer(ctx, js, wire.DMStream(s), jetstream.ConsumerConfig{
				Durable: wire.DMConsumer(p, id.UID), FilterSubject: wire.DMFilter(s, p),
				AckPolicy: jetstream.AckExplicitPolicy, AckWait: AckWait,
				DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: dmLast + 1,
			})
		})
		if !ended {
			durables = append(durables, func() error {
				return ensureConsumer(ctx, js, wire.DlvStream(s), jetstream.ConsumerConfig{
					Durable: wire.DlvConsumer(p, id.UID), FilterSubject: wire.DlvSubject(s, p, id.UID),
					AckPolicy: jetstream.AckExplicitPolicy, AckWait: AckWait, DeliverPolicy: jetstream.DeliverAllPolicy,
				})
			})
		}
		if id.Role != "" {
			durables = append(durables, func() error {
				return ensureConsumer(ctx, js, wire.TaskStream(s), jetstream.ConsumerConfig{
					Durable: wire.SvcConsumer(id.Role), FilterSubject: wire.SvcFilter(s, id.Role),
					AckPolicy: jetstream.AckExplicitPolicy, AckWait: AckWait, DeliverPolicy: jetstream.DeliverAllPolicy,
				})
			})
		}
	}
	if err := concurrently(durables...); err != nil {
		return err
	}
	if ended {
		return nil // the principal's record names a lifecycle that lives, or a later one
	}
	// Then its read ACL, then its registry row: whoever sees the row finds
	// the rest in place.
	if id.Profile != wire.ProfileObserver {
		row := wire.ACLRow{
			Principal: p.ID(), LifecycleUID: id.UID, Revision: 1, UpdatedAt: time.Now().UTC(),
			AllowSubscribe: nonNil(id.AllowSubscribe), IssuedAllowSubscribe: nonNil(id.AllowSubscribe),
		}
		if id.Profile == wire.ProfileOperator {
			row.AllowSubscribe, row.IssuedAllowSubscribe = []string{">"}, []string{">"}
		}
		b, _ := json.Marshal(row)
		if _, err := acl.Put(ctx, wire.ACLKey(p, id.UID), b); err != nil {
			return fmt.Errorf("recording the read ACL of %s: %w", p, err)
		}
	}
	rec := IdentityRecord{
		ID: p.ID(), Name: p.Actor, Role: id.Role, Profile: id.Profile, LifecycleUID: id.UID,
		Capabilities: id.Capabilities,
		Subscribe:    nonNil(id.Subscribe), AllowSubscribe: nonNil(id.AllowSubscribe), AllowPublish: nonNil(id.AllowPublish),
		MintedAt: time.Now().UTC(), HostedBy: id.HostedBy,
	}
	b, _ := json.Marshal(rec)
	if _, err := kv.Put(ctx, wire.IdentityKey(p), b); err != nil {
		return fmt.Errorf("recording identity %s: %w", p, err)
	}
	return nil
}

// concurrently runs each function in a goroutine of its own and, once
// every one has returned, their errors joined (nil when none failed).
func concurrently(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Go(func() { errs[i] = f() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// lifecycleEnded reports whether a lifecycle's ACL row says it ended.
func lifecycleEnded(ctx context.Context, acl jetstream.KeyValue, key string) (bool, error) {
	e, err := acl.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var row wire.ACLRow
	return json.Unmarshal(e.Value(), &row) == nil && row.Ended(), nil
}

// LookupIdentity reads a principal's registry row; found is false when the
// space never minted it.
func LookupIdentity(ctx context.Context, js jetstream.JetStream, space string, p wire.Principal) (rec IdentityRecord, found bool, err error) {
	kv, err := js.KeyValue(ctx, wire.RecordsBucket(space))
	if err != nil {
		return rec, false, err
	}
	e, err := kv.Get(ctx, wire.IdentityKey(p))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	if err := json.Unmarshal(e.Value(), &rec); err != nil || rec.ID != p.ID() {
		return IdentityRecord{}, false, fmt.Errorf("the identity record of %s is not one the space wrote", p)
	}
	return rec, true, nil
}

// ensureConsumer creates a durable unless it already exists; an existing
// one is never reset, so a restart keeps its pending messages.
func ensureConsumer(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.ConsumerConfig) error {
	// Created in one request: one that exists already (with a start
	// sequence of its own, say) is left as it is.
	if _, err := js.CreateConsumer(ctx, stream, cfg); err != nil && !errors.Is(err, jetstream.ErrConsumerExists) {
		return fmt.Errorf("creating consumer %s on %s: %w", cfg.Durable, stream, err)
	}
	return nil
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
