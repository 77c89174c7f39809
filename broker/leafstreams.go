package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// LinkedStreams are the space's streams whose messages cross a leaf link:
// channel posts and DMs. Tasks stay on the side they were sent on (a
// role's work queue is served by one side, so no task is taken twice).
func LinkedStreams(space string) []string {
	return []string{wire.ChatStream(space), wire.DMStream(space)}
}

// OriginStream is the stream that takes this side's own publishes for a
// linked stream: the stream itself then only sources, from its own
// side's origin and from every peer's, so a message is stored once per
// side and never sent back where it came from.
func OriginStream(stream string) string { return "ORIGIN_" + stream }

// LinkConsumer is the durable consumer of an origin stream that feeds the
// peer with domain peer: made by the origin's side, so the peer never
// creates a consumer there, only resets its own to where it got to.
func LinkConsumer(peer string) string { return "LINK_" + peer }

// linkDeliver is the subject the origin of stream on side from delivers
// to side to's copy of it on.
func linkDeliver(from, to, stream string) string {
	return "$JS.S.LINK." + from + "." + to + "." + stream
}

// LinkStreams shapes a provisioned space for a leaf link between this
// side (JetStream domain own) and peers (the other sides' domains). Each
// linked stream S keeps its name, limits, consumers and stored notices;
// its subjects move to OriginStream(S), which takes what this side's
// agents publish (and acknowledges none of them, as S did), and S sources
// that origin and every peer's origin through the peer's
// $JS.<domain>.API. Each origin holds one durable consumer per peer
// (LinkConsumer), acknowledged by flow control, which the peer's source
// resets to the sequence it last stored: what a side stored while the
// link was down is delivered once when it returns, and a peer needs no
// right to make consumers. An origin holds only its own side's
// publishes, so nothing loops. A peer added later is sourced from the
// time it is added; history from before the link is not copied.
func LinkStreams(ctx context.Context, nc *nats.Conn, space string, maxStore int64, own string, peers []string) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	cfgs := StreamConfigs(space, maxStore)
	for _, name := range LinkedStreams(space) {
		i := slices.IndexFunc(cfgs, func(c jetstream.StreamConfig) bool { return c.Name == name })
		if err := linkStream(ctx, js, cfgs[i], own, peers); err != nil {
			return fmt.Errorf("linking stream %s: %w", name, err)
		}
	}
	return nil
}

func linkStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig, own string, peers []string) error {
	s, err := js.Stream(ctx, want.Name)
	if err != nil {
		return err
	}
	have := s.CachedInfo().Config
	origin := OriginStream(want.Name)
	if len(have.Subjects) > 0 {
		// Free the subjects first: two streams of one domain may not
		// overlap. A publish in between is stored nowhere and heard by
		// no one, as before the mesh started.
		have.Subjects = nil
		have.Sources = []*jetstream.StreamSource{{Name: origin, OptStartSeq: 1}}
		if _, err := js.UpdateStream(ctx, have); err != nil {
			return fmt.Errorf("moving its subjects to %s: %w", origin, err)
		}
	}
	if o, err := js.Stream(ctx, origin); errors.Is(err, jetstream.ErrStreamNotFound) {
		oc := jetstream.StreamConfig{
			Name: origin, Subjects: want.Subjects, Storage: want.Storage,
			Retention: want.Retention, MaxMsgsPerSubject: want.MaxMsgsPerSubject, Discard: want.Discard,
			Duplicates: want.Duplicates, MaxBytes: want.MaxBytes, Replicas: have.Replicas,
			// Agents publish here: answer none of them (storedNotices).
			NoAck: true,
		}
		if _, err := js.CreateStream(ctx, oc); err != nil {
			return fmt.Errorf("creating %s: %w", origin, err)
		}
	} else if err != nil {
		return err
	} else if oc := o.CachedInfo().Config; !slices.Equal(oc.Subjects, want.Subjects) {
		oc.Subjects = want.Subjects
		if _, err := js.UpdateStream(ctx, oc); err != nil {
			return fmt.Errorf("giving %s the subjects again: %w", origin, err)
		}
	}
	for _, p := range peers {
		if err := ensureLinkConsumer(ctx, js, origin, own, p, want.Name); err != nil {
			return fmt.Errorf("the consumer of %s for %s: %w", origin, p, err)
		}
	}
	sources := wantSources(have.Sources, origin, own, peers, want.Name)
	if slices.EqualFunc(sources, have.Sources, sameSource) && len(sources) == len(have.Sources) {
		return nil
	}
	have.Sources = sources
	if _, err := js.UpdateStream(ctx, have); err != nil {
		return fmt.Errorf("sourcing %v: %w", peers, err)
	}
	return nil
}

// ensureLinkConsumer makes the durable consumer of origin that feeds
// peer, unless it is there: pushed to linkDeliver, acknowledged by flow
// control, from the origin's first message (an origin holds only what its
// side published since it linked).
func ensureLinkConsumer(ctx context.Context, js jetstream.JetStream, origin, own, peer, stream string) error {
	name := LinkConsumer(peer)
	// The jetstream API reads a push consumer as "not a pull consumer":
	// that is the one this made before.
	if _, err := js.Consumer(ctx, origin, name); err == nil || errors.Is(err, jetstream.ErrNotPullConsumer) {
		return nil
	} else if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return err
	}
	_, err := js.CreateConsumer(ctx, origin, jetstream.ConsumerConfig{
		Durable: name, DeliverSubject: linkDeliver(own, peer, stream), AckPolicy: jetstream.AckFlowControlPolicy,
		FlowControl: true, IdleHeartbeat: time.Second, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	return err
}

// wantSources is the local origin and each peer's, keeping a source that
// is already there as it is. The local one starts at the origin's first
// message: an origin holds only what its side published since it linked,
// none of it in this stream yet. A peer's is its origin's consumer for
// this side, which the source resets to the position this stream
// recovers from what it stored from it.
func wantSources(have []*jetstream.StreamSource, origin, own string, peers []string, stream string) []*jetstream.StreamSource {
	out := []*jetstream.StreamSource{{Name: origin, OptStartSeq: 1}}
	for _, p := range peers {
		want := &jetstream.StreamSource{Name: origin, External: &jetstream.ExternalStream{APIPrefix: "$JS." + p + ".API"},
			Consumer: &jetstream.StreamConsumerSource{Name: LinkConsumer(own), DeliverSubject: linkDeliver(p, own, stream)}}
		if i := slices.IndexFunc(have, func(s *jetstream.StreamSource) bool { return sameSource(s, want) }); i >= 0 {
			out = append(out, have[i])
			continue
		}
		out = append(out, want)
	}
	return out
}

func sameSource(a, b *jetstream.StreamSource) bool {
	if a.Name != b.Name || (a.External == nil) != (b.External == nil) || (a.Consumer == nil) != (b.Consumer == nil) {
		return false
	}
	if a.Consumer != nil && *a.Consumer != *b.Consumer {
		return false
	}
	return a.External == nil || a.External.APIPrefix == b.External.APIPrefix
}

// UnlinkStreams undoes LinkStreams on a space that runs without a link
// again: each linked stream takes its subjects back from its origin and
// stops sourcing. The origin is kept (with no subjects of its own), so a
// later link goes on from its sequence and every side's position in it
// still holds.
func UnlinkStreams(ctx context.Context, nc *nats.Conn, space string, maxStore int64) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	cfgs := StreamConfigs(space, maxStore)
	for _, name := range LinkedStreams(space) {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return fmt.Errorf("reading stream %s: %w", name, err)
		}
		have := s.CachedInfo().Config
		if len(have.Sources) == 0 && len(have.Subjects) > 0 {
			continue
		}
		origin := OriginStream(name)
		if o, err := js.Stream(ctx, origin); err == nil {
			oc := o.CachedInfo().Config
			oc.Subjects = []string{origin}
			if _, err := js.UpdateStream(ctx, oc); err != nil {
				return fmt.Errorf("taking the subjects from %s: %w", origin, err)
			}
		} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		i := slices.IndexFunc(cfgs, func(c jetstream.StreamConfig) bool { return c.Name == name })
		have.Sources = nil
		have.Subjects = cfgs[i].Subjects
		if _, err := js.UpdateStream(ctx, have); err != nil {
			return fmt.Errorf("giving %s its subjects back: %w", name, err)
		}
	}
	return nil
}

// relink restarts the peer sources of every linked stream: the server
// retries a source it cannot reach with a back-off of up to two minutes,
// so when a link comes back the sources are taken out and put in again,
// which resumes each at the position the stream recovers from what it
// stored from that source.
func relink(ctx context.Context, js jetstream.JetStream, space string) error {
	for _, name := range LinkedStreams(space) {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return err
		}
		cfg := s.CachedInfo().Config
		all := cfg.Sources
		local := slices.DeleteFunc(slices.Clone(all), func(s *jetstream.StreamSource) bool { return s.External != nil })
		if len(local) == len(all) {
			continue
		}
		cfg.Sources = local
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("restarting the sources of %s: %w", name, err)
		}
		cfg.Sources = all
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("restarting the sources of %s: %w", name, err)
		}
	}
	return nil
}

// FollowLeafLinks restarts the linked streams' peer sources each time a
// leaf connection comes up, and again every few seconds while a link is
// up but a peer's source has not started (the peer's own consumer for
// this side may come only after the connection: a leaf links its streams
// once its broker runs), until ctx ends; failures go to logf and are
// tried again.
func (b *Broker) FollowLeafLinks(ctx context.Context, nc *nats.Conn, space string, logf func(format string, args ...any)) {
	js, err := jetstream.New(nc)
	if err != nil {
		logf("following leaf links: %v", err)
		return
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	last := 0
	var check time.Time // when to look at the sources again; zero: no need
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := b.LeafLinks()
		now := time.Now()
		restart := n > last
		if !restart && n > 0 && !check.IsZero() && now.After(check) {
			restart = !sourcesStarted(ctx, js, space)
			if !restart {
				check = time.Time{}
			}
		}
		if restart {
			if err := relink(ctx, js, space); err != nil && ctx.Err() == nil {
				logf("leaf link up, but its streams did not restart: %v", err)
				n = last // try again on the next tick
			}
			check = now.Add(sourceCheck)
		}
		last = n
	}
}

// sourceCheck is how long after restarting its sources a stream is
// looked at again to see whether every peer's source started.
const sourceCheck = 2 * time.Second

// sourcesStarted reports whether every peer source of the linked streams
// has heard from its peer and reports no error.
func sourcesStarted(ctx context.Context, js jetstream.JetStream, space string) bool {
	for _, name := range LinkedStreams(space) {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return false
		}
		for _, src := range s.CachedInfo().Sources {
			if src.External != nil && (src.Error != nil || src.Active < 0 || src.Active > sourceCheck) {
				return false
			}
		}
	}
	return true
}
