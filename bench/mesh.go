package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
)

// all is every path, in table order.
func all() []path {
	ps := []path{
		{name: "dm publish to hand-over", base: "raw JetStream publish to push consumer", goal: "within 1.5x", limit: 1.5, run: dmPath},
		{name: "anycast publish to hand-over", base: "raw JetStream publish to push consumer", goal: "within 1.5x", limit: 1.5, run: anycastPath},
	}
	for _, n := range []int{1, 10, 100} {
		ps = append(ps, path{name: fmt.Sprintf("live fan-out %d", n), base: fmt.Sprintf("raw JetStream publish to %d core subscribers", n),
			goal: "within 1.5x", limit: 1.5, run: livePath(n)})
	}
	for _, n := range []int{10, 100} {
		ps = append(ps, path{name: fmt.Sprintf("durable fan-out %d", n), base: fmt.Sprintf("%d SyncAlways publishes, async-batched", n),
			goal: "within 2x", limit: 2, run: durablePath(n), notOnURL: "needs durable members, which only minted identities have, and the space there is open"})
	}
	ps = append(ps,
		path{name: "control call round trip", base: "nats request/reply", goal: "within 3x", limit: 3, run: callPath},
		path{name: "scatter to 16", base: "one control call", goal: "within 2x", limit: 2, run: scatterPath},
	)
	ps = append(ps, seatPaths()...)
	return append(ps, startupPaths()...)
}

// body is a floor's message: about the size of a cotal envelope.
func body(to string) []byte {
	return fmt.Appendf(nil, `{"v":1,"id":"%026d","ts":"2026-01-01T00:00:00.000Z","from":{"id":"local.sender","name":"sender"},%s,"text":"ping"}`, time.Now().UnixNano(), to)
}

// handOver times publish-then-Next between two endpoints (the ack
// outside the measure).
func handOver(ctx context.Context, send func() error, recv *mesh.Endpoint) func(int) (time.Duration, error) {
	return func(int) (time.Duration, error) {
		start := time.Now()
		if err := send(); err != nil {
			return 0, err
		}
		nctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		it, err := recv.Next(nctx)
		if err != nil {
			return 0, err
		}
		d := time.Since(start)
		_ = it.Ack()
		return d, nil
	}
}

// rawHandOver is the floor of a directed message: a JetStream publish to
// a file stream until its durable push consumer on another connection
// has it (the double ack outside the measure).
func rawHandOver(ctx context.Context, e *env) (func(int) (time.Duration, error), error) {
	name := e.name("RAW")
	subj := "raw." + name
	if _, err := e.stream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subj + ".>"}}); err != nil {
		return nil, err
	}
	recv, err := e.raw()
	if err != nil {
		return nil, err
	}
	rjs, _ := jetstream.New(recv)
	cons, err := rjs.CreateOrUpdateConsumer(ctx, name, jetstream.ConsumerConfig{
		Durable: "r", FilterSubject: subj + ".to.>", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute,
	})
	if err != nil {
		return nil, err
	}
	got := make(chan jetstream.Msg, 1)
	cc, err := cons.Consume(func(m jetstream.Msg) { got <- m }, floorPull(jetstream.PullMaxMessages(64))...)
	if err != nil {
		return nil, err
	}
	e.defer_(cc.Stop)
	send, err := e.raw()
	if err != nil {
		return nil, err
	}
	sjs, _ := jetstream.New(send)
	data := body(`"to":"local.alice"`)
	// One message through before the measure: the first pull may have gone
	// to no leader yet, and its retry is no part of the floor.
	if _, err := sjs.Publish(ctx, subj+".to.alice", data, jetstream.WithMsgID("warm")); err != nil {
		return nil, err
	}
	m, err := waitFor(got, "the raw warm-up message")
	if err != nil {
		return nil, err
	}
	_ = m.DoubleAck(ctx)
	return func(i int) (time.Duration, error) {
		start := time.Now()
		if _, err := sjs.Publish(ctx, subj+".to.alice", data, jetstream.WithMsgID(strconv.Itoa(i))); err != nil {
			return 0, err
		}
		m, err := waitFor(got, "the raw message")
		if err != nil {
			return 0, err
		}
		d := time.Since(start)
		_ = m.DoubleAck(ctx)
		return d, nil
	}, nil
}

func dmPath(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
	to := e.name("alice")
	a, err := e.agent(ctx, to, nil, nil, mesh.Options{})
	if err != nil {
		return Stat{}, Stat{}, err
	}
	s, err := e.agent(ctx, e.name("sender"), nil, nil, mesh.Options{OneShot: true})
	if err != nil {
		return Stat{}, Stat{}, err
	}
	if err := sees(ctx, s, "local."+to); err != nil {
		return Stat{}, Stat{}, err
	}
	floor, err := rawHandOver(ctx, e)
	if err != nil {
		return Stat{}, Stat{}, err
	}
	cotal := handOver(ctx, func() error { _, err := s.DM(ctx, "local."+to, "ping"); return err }, a)
	return pair(ctx, budget, 5, 5000, cotal, floor)
}

func anycastPath(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
	role := e.name("reviewer")
	holderID, err := e.mint(ctx, identity(e.name("holder"), role))
	if err != nil {
		return Stat{}, Stat{}, err
	}
	holder, err := e.connect(ctx, holderID, mesh.Options{})
	if err != nil {
		return Stat{}, Stat{}, err
	}
	s, err := e.agent(ctx, e.name("asker"), nil, nil, mesh.Options{OneShot: true})
	if err != nil {
		return Stat{}, Stat{}, err
	}
	floor, err := rawHandOver(ctx, e)
	if err != nil {
		return Stat{}, Stat{}, err
	}
	cotal := handOver(ctx, func() error { _, err := s.Ask(ctx, role, "look"); return err }, holder)
	return pair(ctx, budget, 5, 5000, cotal, floor)
}

// livePath is one live channel post until each of n members, each on its
// own connection, has it in hand; the floor is a JetStream publish to a
// stream like the channel's until n core subscribers have it.
func livePath(n int) func(context.Context, *env, time.Duration) (Stat, Stat, error) {
	return func(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
		ch := e.name("team")
		rctx, cancel := context.WithCancel(ctx)
		e.defer_(cancel)
		got := make(chan struct{}, n)
		err := each(n, 8, func(int) error {
			m, err := e.agent(ctx, e.name("m"), []string{ch}, nil, mesh.Options{})
			if err == nil {
				go readAll(rctx, m, got, false)
			}
			return err
		})
		if err != nil {
			return Stat{}, Stat{}, err
		}
		s, err := e.agent(ctx, e.name("poster"), nil, []string{ch}, mesh.Options{OneShot: true})
		if err != nil {
			return Stat{}, Stat{}, err
		}
		cotal := fanIn(n, got, func(int) error { _, err := s.Send(ctx, ch, "hello"); return err })
		floor, err := rawFanout(ctx, e, n)
		if err != nil {
			return Stat{}, Stat{}, err
		}
		return pair(ctx, budget, 3, 2000, cotal, floor)
	}
}

// readAll tells got of every item m reads until ctx ends.
func readAll(ctx context.Context, m *mesh.Endpoint, got chan<- struct{}, ack bool) {
	failed := 0
	for {
		it, err := m.Next(ctx)
		if err != nil {
			// A read that failed (a delivery call timing out on a
			// loaded machine) is tried again: a reader that stopped here
			// would read as copies lost for every later post. One that
			// keeps failing stops, and the post's wait says so.
			failed++
			if ctx.Err() != nil || errors.Is(err, mesh.ErrClosed) || failed > 20 {
				return
			}
			continue
		}
		failed = 0
		got <- struct{}{}
		if ack {
			_ = it.Ack()
		}
	}
}

// fanIn times post until n arrivals on got.
func fanIn(n int, got <-chan struct{}, post func(i int) error) func(int) (time.Duration, error) {
	return func(i int) (time.Duration, error) {
		start := time.Now()
		if err := post(i); err != nil {
			return 0, err
		}
		for k := range n {
			if _, err := waitFor(got, "a member's copy"); err != nil {
				return 0, fmt.Errorf("post %d: %d of %d copies in hand, then %w", i, k, n, err)
			}
		}
		return time.Since(start), nil
	}
}

func rawFanout(ctx context.Context, e *env, n int) (func(int) (time.Duration, error), error) {
	name := e.name("RAWCHAT")
	subj := "rawchat." + name
	if _, err := e.stream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subj + ".>"},
		MaxMsgsPerSubject: 1000, Discard: jetstream.DiscardOld}); err != nil {
		return nil, err
	}
	got := make(chan struct{}, n)
	err := each(n, 8, func(int) error {
		nc, err := e.raw()
		if err != nil {
			return err
		}
		if _, err := nc.Subscribe(subj+".*", func(*nats.Msg) { got <- struct{}{} }); err != nil {
			return err
		}
		return nc.Flush()
	})
	if err != nil {
		return nil, err
	}
	send, err := e.raw()
	if err != nil {
		return nil, err
	}
	sjs, _ := jetstream.New(send)
	data := body(`"channel":"team"`)
	return fanIn(n, got, func(i int) error {
		_, err := sjs.Publish(ctx, subj+".team", data, jetstream.WithMsgID(strconv.Itoa(i)))
		return err
	}), nil
}

// durablePath is one post until the last of n members has it through the
// durable path alone (fan-out writer, trusted reader, the member's
// backstop: no live subscription); the floor is the n SyncAlways writes
// such a fan-out needs at least, published at once and all confirmed.
func durablePath(n int) func(context.Context, *env, time.Duration) (Stat, Stat, error) {
	return func(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
		ch := e.name("kept")
		reg, err := mesh.OpenRegistry(ctx, e.js, e.space)
		if err != nil {
			return Stat{}, Stat{}, err
		}
		off := false
		if _, err := reg.Set(ctx, ch, mesh.ChannelConfig{Replay: &off, DeliveryClass: mesh.ClassDurable}); err != nil {
			return Stat{}, Stat{}, err
		}
		rctx, cancel := context.WithCancel(ctx)
		e.defer_(cancel)
		got := make(chan struct{}, n)
		// One by one: set up eight at a time, a post right after the
		// last join has missed a member for more than ten seconds.
		err = each(n, 1, func(int) error {
			creds, err := e.mint(ctx, identity(e.name("d"), "", ch))
			if err != nil {
				return err
			}
			// Hold the channel durably, then read only the backstop.
			first, err := e.connect(ctx, creds, mesh.Options{OneShot: true})
			if err != nil {
				return err
			}
			_ = first.Close()
			m, err := e.connect(ctx, creds, mesh.Options{Subscribe: []string{}})
			if err == nil {
				go readAll(rctx, m, got, true)
			}
			return err
		})
		if err != nil {
			return Stat{}, Stat{}, err
		}
		p, err := e.agent(ctx, e.name("poster"), nil, []string{ch}, mesh.Options{OneShot: true})
		if err != nil {
			return Stat{}, Stat{}, err
		}
		cotal := fanIn(n, got, func(i int) error { _, err := p.Send(ctx, ch, fmt.Sprintf("post %d", i)); return err })
		floor, err := rawWrites(ctx, e, n)
		if err != nil {
			return Stat{}, Stat{}, err
		}
		return pair(ctx, budget, 3, 1000, cotal, floor)
	}
}

// rawWrites is n publishes to a file stream, sent at once, until every
// one is confirmed stored.
func rawWrites(ctx context.Context, e *env, n int) (func(int) (time.Duration, error), error) {
	name := e.name("RAWFAN")
	subj := "rawfan." + name
	if _, err := e.stream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subj + ".>"}}); err != nil {
		return nil, err
	}
	nc, err := e.raw()
	if err != nil {
		return nil, err
	}
	js, _ := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	data := body(`"channel":"kept"`)
	return func(i int) (time.Duration, error) {
		start := time.Now()
		for k := range n {
			if _, err := js.PublishAsync(fmt.Sprintf("%s.m%d", subj, k), data,
				jetstream.WithMsgID(fmt.Sprintf("%d-%d", i, k))); err != nil {
				return 0, err
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(within):
			return 0, fmt.Errorf("%d writes were not confirmed within %s", n, within)
		}
		return time.Since(start), nil
	}, nil
}
