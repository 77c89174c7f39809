package attach

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// Registry defaults.
const (
	DefaultMaxSessions  = 64
	DefaultRedeemWithin = time.Minute
)

// sessionState is where a session is in its life (spec §12); once it
// ends (closed, expired, superseded, retired) the registry forgets it.
type sessionState string

const (
	stateIssuing sessionState = "issuing" // offered, not yet redeemed
	stateActive  sessionState = "active"  // redeemed by its holder
)

// Target is the seat a session attaches to; it stays on the manager's side
// and is never in the grant.
type Target struct {
	Name         string
	LifecycleUID string
}

// RegistryOptions configure the sessions of one manager instance at one
// epoch.
type RegistryOptions struct {
	Space       string
	Endpoint    string
	Serving     Serving
	MaxSessions int           // offered plus live; 0: DefaultMaxSessions (the manager's --max-sessions)
	Window      int           // 0: DefaultWindow
	TTL         time.Duration // a grant's and its session's lifetime; 0: DefaultGrantTTL
	// RedeemWithin is how long an offered grant holds its slot unredeemed;
	// 0: DefaultRedeemWithin.
	RedeemWithin time.Duration
	Signer       *Signer          // nil: a fresh key
	Server       ServerOptions    // for every session served
	Now          func() time.Time // nil: time.Now
}

// Registry is a manager's attach sessions: it offers grants within the
// session ceiling, redeems each once for its holder only, serves it, and
// ends sessions when their seat goes or the manager does. It also switches
// a seat's own answers to terminal queries off while any session is
// attached to it. Safe for concurrent use; mu guards everything below it.
type Registry struct {
	opts   RegistryOptions
	signer *Signer

	mu       sync.Mutex
	sessions map[string]*entry // by session id
	attached map[Terminal]int  // live sessions per seat
	sizes    sizes             // the smallest attached size wins (sizes.go)
	closed   bool
	closeWhy Reason
}

type entry struct {
	grant   Grant
	target  Target
	state   sessionState
	offered time.Time
	claimed bool    // Serve is opening its rail
	server  *Server // once served
	endWhy  Reason  // ended while Serve was opening the rail
}

// NewRegistry prepares the sessions of one serving instance and epoch.
func NewRegistry(opts RegistryOptions) (*Registry, error) {
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.RedeemWithin <= 0 {
		opts.RedeemWithin = DefaultRedeemWithin
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Signer == nil {
		opts.Signer = NewSigner()
	}
	if _, err := proto.EndpointToken(opts.Endpoint); err != nil {
		return nil, err
	}
	if !proto.ValidID(opts.Serving.InstanceID) {
		return nil, refuse(ErrInvalidGrant, "serving instance id %q is not an id token", opts.Serving.InstanceID)
	}
	return &Registry{
		opts: opts, signer: opts.Signer,
		sessions: map[string]*entry{},
		attached: map[Terminal]int{},
	}, nil
}

// Offer mints a grant for holder to attach to target. It refuses, before
// minting anything, once offered and live sessions reach the ceiling
// (naming --max-sessions) or after Close.
func (r *Registry) Offer(target Target, holder Holder) (Grant, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Grant{}, proto.Refuse(proto.CodeUnavailable, "the manager is stopping (%s); attach again once it is back", r.closeWhy)
	}
	r.pruneLocked()
	if len(r.sessions) >= r.opts.MaxSessions {
		return Grant{}, proto.Refuse(proto.CodeResourceExhausted, "%d attach sessions are open, the most this manager allows (--max-sessions %d); detach one or restart the manager with a higher --max-sessions", len(r.sessions), r.opts.MaxSessions)
	}
	g, err := r.signer.Issue(GrantRequest{
		Space: r.opts.Space, Endpoint: r.opts.Endpoint, Holder: holder, Serving: r.opts.Serving,
		Window: r.opts.Window, TTL: r.opts.TTL, Now: r.opts.Now(),
	})
	if err != nil {
		return Grant{}, proto.Refuse(proto.CodeBadRequest, "%v", err)
	}
	r.sessions[g.SessionID] = &entry{grant: g, target: target, state: stateIssuing, offered: r.opts.Now()}
	return g, nil
}

// pruneLocked forgets offers nobody redeemed, or nobody served, in time.
// It needs mu.
func (r *Registry) pruneLocked() {
	now := r.opts.Now()
	for id, e := range r.sessions {
		if !e.claimed && now.Sub(e.offered) > r.opts.RedeemWithin {
			delete(r.sessions, id)
		}
	}
}

// Redeem checks a presented grant (signature, this instance and epoch,
// expiry), that presenter is its holder exactly, and that it was never
// redeemed, and makes it active. It returns the grant and its target. The
// refusals are ep errors: permission-denied for a forgery or another
// presenter, conflict for a second redeem, expired for a grant from before
// a restart or past its time, not-found for one never offered here.
func (r *Registry) Redeem(raw []byte, presenter Holder) (Grant, Target, error) {
	g, err := r.signer.Verify(raw, Expect{Space: r.opts.Space, Endpoint: r.opts.Endpoint, Serving: r.opts.Serving, Now: r.opts.Now()})
	if err != nil {
		return Grant{}, Target{}, err
	}
	if presenter != g.Holder {
		return Grant{}, Target{}, proto.Refuse(proto.CodePermissionDenied, "this attach grant was issued to %s, not to %s", g.Holder.ID, presenter.ID)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Grant{}, Target{}, proto.Refuse(proto.CodeUnavailable, "the manager is stopping (%s); attach again once it is back", r.closeWhy)
	}
	r.pruneLocked()
	e, ok := r.sessions[g.SessionID]
	switch {
	case !ok:
		return Grant{}, Target{}, proto.Refuse(proto.CodeNotFound, "no attach session waits for this grant (never offered here, or not redeemed within %s); ask for a new one", r.opts.RedeemWithin)
	case e.state != stateIssuing:
		return Grant{}, Target{}, proto.Refuse(proto.CodeConflict, "this attach grant was already redeemed; a grant is good for one session")
	}
	e.state = stateActive
	return e.grant, e.target, nil
}

// Serve starts the server side of a redeemed session on the seat's
// terminal, subscribed before it returns, and keeps it until it ends. The
// seat stops answering terminal queries itself while any session is on it.
func (r *Registry) Serve(ctx context.Context, nc *nats.Conn, g Grant, term Terminal) (*Server, error) {
	r.mu.Lock()
	e, ok := r.sessions[g.SessionID]
	if !ok || e.state != stateActive || e.claimed {
		r.mu.Unlock()
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "the attach session is not redeemed, or is already served")
	}
	e.claimed = true
	r.mu.Unlock()

	s, err := serve(ctx, nc, e.grant, e.target.Name, term, r.opts.Server, &r.sizes)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		delete(r.sessions, g.SessionID)
		return nil, err
	}
	e.server = s
	if r.attached[term]++; r.attached[term] == 1 {
		term.SetAnswerQueries(false)
	}
	switch { // ended while the rail opened
	case r.closed:
		go s.End(r.closeWhy)
	case e.endWhy != "":
		go s.End(e.endWhy)
	}
	go r.reap(g.SessionID, term, s)
	return s, nil
}

// reap forgets a session once it ends, freeing its slot.
func (r *Registry) reap(id string, term Terminal, s *Server) {
	<-s.Done()
	r.sizes.drop(term, s) // the rest of the seat's terminals decide its size
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.sessions, id)
	if r.attached[term]--; r.attached[term] <= 0 {
		delete(r.attached, term)
		term.SetAnswerQueries(true)
	}
}

// EndTarget ends every session on the seat named name with reason (for a
// despawn: target-despawn, before the seat is stopped) and withdraws its
// unredeemed offers. It returns once they have ended.
func (r *Registry) EndTarget(name string, reason Reason) {
	r.mu.Lock()
	var servers []*Server
	for id, e := range r.sessions {
		if e.target.Name != name {
			continue
		}
		switch {
		case e.server != nil:
			servers = append(servers, e.server)
		case e.claimed:
			e.endWhy = reason
		default:
			delete(r.sessions, id)
		}
	}
	r.mu.Unlock()
	endAll(servers, reason)
}

// Close ends every session with reason (manager-restart when the manager
// stops) and refuses new offers and redeems. It returns once they ended.
func (r *Registry) Close(reason Reason) {
	r.mu.Lock()
	r.closed, r.closeWhy = true, reason
	var servers []*Server
	for id, e := range r.sessions {
		switch {
		case e.server != nil:
			servers = append(servers, e.server)
		case !e.claimed:
			delete(r.sessions, id)
		}
	}
	r.mu.Unlock()
	endAll(servers, reason)
}

func endAll(servers []*Server, reason Reason) {
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.End(reason)
		}()
	}
	wg.Wait()
}

// Sessions are the counters of every served session that has not ended
// yet, by seat name then start; name "" means every seat.
func (r *Registry) Sessions(name string) []Stats {
	r.mu.Lock()
	var servers []*Server
	for _, e := range r.sessions {
		if e.server != nil && (name == "" || e.target.Name == name) {
			servers = append(servers, e.server)
		}
	}
	r.mu.Unlock()
	out := make([]Stats, 0, len(servers))
	for _, s := range servers {
		out = append(out, s.Stats())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return out[i].Since.Before(out[j].Since)
	})
	return out
}
