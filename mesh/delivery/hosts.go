package delivery

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"maps"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Host timings.
const (
	releaseAfter = 45 * time.Second // a taken item not settled by then goes back (before the 60 s ack wait)
	hostIdle     = 5 * time.Minute  // a host nobody asked for this long is closed
	sweepEvery   = time.Second
)

// agentHost is what the service keeps for one mediated lifecycle: an
// endpoint acting for it on the service's trusted connection, bound to its
// DM, role and backstop durables, and the items handed out but not yet
// settled. It fetches on demand for a caller that only asks (a CLI
// command); while the caller heartbeats it consumes continuously and
// writes the caller's presence. mu guards the fields below it.
type agentHost struct {
	ci callerInfo
	e  *mesh.Endpoint

	mu       sync.Mutex
	out      map[string]handed
	rejected map[string]int // counts already reported
	online   bool
	quit     chan struct{}   // closed when the caller goes offline: its waiting takes end
	ended    map[string]bool // reader sessions that said offline: their late takes are refused
	lastBeat time.Time
	lastUse  time.Time
}

type handed struct {
	it *mesh.Item
	at time.Time
}

// host finds or opens the host of a caller. A lifecycle whose connector a
// seat's manager holds is refused: two readers would split its inbox.
//
// The endpoint is connected outside hostsMu, so one caller's slow first
// call never holds up another's. A caller that finds its host being opened
// waits for that opening and looks again (it opens the host itself if that
// one failed); a host opened after closeHosts began is discarded, as the
// closing would have closed it.
func (s *Service) host(ctx context.Context, ci callerInfo) (*agentHost, *proto.Error) {
	if ci.hosted != "" {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "%s is a seat: its connector on manager %s holds its inbox and presence; inside the seat use `cotal inbox` and `cotal set-status`", ci.p, ci.hosted)
	}
	key := ci.p.ID() + "." + ci.uid
	for {
		s.hostsMu.Lock()
		if h := s.hosts[key]; h != nil {
			s.hostsMu.Unlock()
			h.touch()
			return h, nil
		}
		if o := s.opening[key]; o != nil {
			s.hostsMu.Unlock()
			select {
			case <-o:
				continue
			case <-ctx.Done():
				return nil, proto.Failed(proto.CodeUnavailable, "opening the stored messages of %s: %v", ci.p, ctx.Err())
			}
		}
		done := make(chan struct{})
		s.opening[key] = done
		gen, hook := s.hostsGen, s.beforeConnect
		s.hostsMu.Unlock()
		h, e := s.openHost(ctx, ci, key, gen, hook)
		close(done)
		return h, e
	}
}

// openHost connects a caller's host endpoint, with no lock held, and
// installs it under hostsMu unless the hosts were closed meanwhile.
func (s *Service) openHost(ctx context.Context, ci callerInfo, key string, gen uint64, hook func(wire.Principal)) (*agentHost, *proto.Error) {
	if hook != nil {
		hook(ci.p)
	}
	e, err := mesh.Connect(ctx, mesh.Options{
		Conn: s.nc, Space: s.space, Subscribe: []string{}, OneShot: true,
		Act:  &mesh.Identity{Principal: ci.p, UID: ci.uid, Role: ci.role, Profile: wire.ProfileAgent, AllowSubscribe: ci.read, AllowPublish: []string{}},
		Logf: func(format string, args ...any) { s.logf("host of %s: "+format, append([]any{ci.p}, args...)...) },
	})
	s.hostsMu.Lock()
	delete(s.opening, key)
	closed := gen != s.hostsGen
	var h *agentHost
	if err == nil && !closed {
		h = &agentHost{ci: ci, e: e, out: map[string]handed{}, rejected: map[string]int{}, lastUse: time.Now(), quit: make(chan struct{}), ended: map[string]bool{}}
		s.hosts[key] = h
	}
	s.hostsMu.Unlock()
	switch {
	case err != nil:
		return nil, proto.Failed(proto.CodeUnavailable, "opening the stored messages of %s: %v", ci.p, err)
	case closed:
		_ = e.Close()
		return nil, proto.Failed(proto.CodeUnavailable, "opening the stored messages of %s: the delivery service stopped serving", ci.p)
	}
	return h, nil
}

func (h *agentHost) touch() {
	h.mu.Lock()
	h.lastUse = time.Now()
	h.mu.Unlock()
}

func newKey() string {
	var b [18]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// take hands over up to max items, waiting up to wait for the first; each
// stays the caller's, un-acked, until settled or released.
func (h *agentHost) take(ctx context.Context, max int, wait time.Duration, session string) ([]mesh.TakenItem, map[string]int, error) {
	if max <= 0 {
		max = mesh.MaxInbox
	}
	// A take waiting for its caller ends when that caller goes offline:
	// what arrives later must not be handed to a reader that is gone.
	h.mu.Lock()
	quit, ended := h.quit, h.ended[session]
	h.mu.Unlock()
	if ended {
		return []mesh.TakenItem{}, nil, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	items, err := h.e.HandOut(ctx, max, wait)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastUse = time.Now()
	out := make([]mesh.TakenItem, 0, len(items))
	for _, it := range items {
		k := newKey()
		h.out[k] = handed{it: it, at: time.Now()}
		stream, seq := it.StoredAt()
		out = append(out, mesh.TakenItem{Key: k, Kind: it.Kind, Subject: it.Subject.String(), Msg: it.Msg, Historical: it.Historical, Stream: stream, Seq: seq})
	}
	var delta map[string]int
	for r, n := range h.e.Rejected() {
		if d := n - h.rejected[string(r)]; d > 0 {
			if delta == nil {
				delta = map[string]int{}
			}
			delta[string(r)] = d
			h.rejected[string(r)] = n
		}
	}
	return out, delta, nil
}

// settle acks (or releases) handed-out items; unknown keys are skipped.
func (h *agentHost) settle(keys []string, release bool) int {
	h.mu.Lock()
	var its []*mesh.Item
	for _, k := range keys {
		if d, ok := h.out[k]; ok {
			its = append(its, d.it)
			delete(h.out, k)
		}
	}
	h.lastUse = time.Now()
	h.mu.Unlock()
	for _, it := range its {
		if release {
			_ = it.Release()
		} else {
			_ = it.Ack()
		}
	}
	return len(its)
}

// presence writes the caller's record: each call is a heartbeat; the
// first starts the writer, Offline stops it.
func (h *agentHost) presence(ctx context.Context, a mesh.PresenceArgs) (presence.Record, error) {
	h.mu.Lock()
	h.lastBeat, h.lastUse = time.Now(), time.Now()
	online := h.online
	h.mu.Unlock()
	if a.Offline {
		h.endSession(a.Session)
		h.releaseAll()
		h.setOnline(false)
		h.e.StopConsuming()
		err := h.e.GoOffline(ctx)
		rec := presence.Record{Status: presence.Offline}
		return rec, err
	}
	if !online {
		h.e.SetCard(a.Kind, a.Description, a.Tags)
		if err := h.e.GoOnline(ctx); err != nil {
			return presence.Record{}, err
		}
		if err := h.e.Consume(); err != nil {
			return presence.Record{}, err
		}
		h.setOnline(true)
	}
	rec, _ := h.e.PresenceRecord()
	if a.Status != "" || a.Activity != nil {
		st, act := rec.Status, rec.Activity
		if a.Status != "" {
			st = presence.Status(a.Status)
		}
		if a.Activity != nil {
			act = *a.Activity
		}
		if err := h.e.SetStatus(st, act); err != nil {
			return rec, err
		}
	}
	if a.Attention != "" {
		if err := h.e.SetAttention(presence.Attention(a.Attention)); err != nil {
			return rec, err
		}
	}
	rec, _ = h.e.PresenceRecord()
	return rec, nil
}

// endSession remembers that a reader said offline (bounded: a host sees
// few sessions in its life, and forgets them all past a hundred).
func (h *agentHost) endSession(session string) {
	if session == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ended) >= 100 {
		h.ended = map[string]bool{}
	}
	h.ended[session] = true
}

func (h *agentHost) setOnline(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.online && !on {
		close(h.quit)
		h.quit = make(chan struct{})
	}
	h.online = on
}

// releaseAll gives back every unsettled item.
func (h *agentHost) releaseAll() {
	h.mu.Lock()
	out := h.out
	h.out = map[string]handed{}
	h.mu.Unlock()
	for _, d := range out {
		_ = d.it.Release()
	}
}

// sweep releases items held too long, takes silent callers offline and
// reports whether the host has been idle long enough to close.
func (h *agentHost) sweep(now time.Time) (idle bool) {
	h.mu.Lock()
	var late []*mesh.Item
	for k, d := range maps.Clone(h.out) {
		if now.Sub(d.at) > releaseAfter {
			late = append(late, d.it)
			delete(h.out, k)
		}
	}
	silent := h.online && now.Sub(h.lastBeat) > presence.TTL
	if silent {
		h.online = false
		close(h.quit)
		h.quit = make(chan struct{})
	}
	idle = !h.online && len(h.out) == 0 && now.Sub(h.lastUse) > hostIdle
	h.mu.Unlock()
	for _, it := range late {
		_ = it.Release()
	}
	if silent {
		h.e.StopConsuming()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_ = h.e.GoOffline(ctx)
		cancel()
	}
	return idle
}

// sweepHosts runs the hosts' sweep every second while the service runs.
func (s *Service) sweepHosts() {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.hostsMu.Lock()
			var closing []*agentHost
			for k, h := range s.hosts {
				if h.sweep(now) {
					closing = append(closing, h)
					delete(s.hosts, k)
				}
			}
			s.hostsMu.Unlock()
			for _, h := range closing {
				_ = h.e.Close()
			}
		}
	}
}

// closeHosts gives back what every host holds and closes them (the lease
// was lost or the service stops).
func (s *Service) closeHosts() {
	s.hostsMu.Lock()
	hosts := s.hosts
	s.hosts = map[string]*agentHost{}
	s.hostsGen++
	s.hostsMu.Unlock()
	for _, h := range hosts {
		h.releaseAll()
		_ = h.e.Close()
	}
}
