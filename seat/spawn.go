package seat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/procid"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/pty"
)

// allocate picks the seat's name: a pinned one must be free, an unpinned
// one is numbered base, base_2, base_3 against every seat and spawn in
// flight here and every name live on the mesh (another manager's seats,
// agents started by hand). The name is reserved until the spawn resolves.
func (m *Manager) allocate(base string, pinned bool, elsewhere func(string) bool) (string, *proto.Error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fenced {
		return "", m.fenceError()
	}
	taken := func(n string) bool {
		s, ok := m.seats[n]
		return m.reserved[n] || (ok && s.live()) || elsewhere(n) || m.opts.Minter.Reserved(n) != nil
	}
	live := len(m.reserved)
	for _, s := range m.seats {
		if s.live() {
			live++
		}
	}
	if live >= m.opts.MaxSeats {
		return "", proto.Refuse(proto.CodeResourceExhausted, "manager %s runs %d seats, its limit", m.iid, m.opts.MaxSeats)
	}
	if why := wire.ReservedActor(base); why != "" {
		return "", proto.Refuse(proto.CodePermissionDenied, "no seat may be named %q: %s", base, why)
	}
	if pinned {
		if err := m.opts.Minter.Reserved(base); err != nil {
			return "", proto.Refuse(proto.CodePermissionDenied, "%v", err)
		}
		if taken(base) {
			return "", proto.Refuse(proto.CodeAlreadyExists, "the name %q is taken (a live seat or an unrevoked credential holds it); stop it or pick another name", base)
		}
		m.reserved[base] = true
		return base, nil
	}
	name := base
	for i := 2; taken(name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	m.reserved[name] = true
	return name, nil
}

// seatRole is the role a spawned seat serves: the persona's, unless the
// spawn asks for another, which only the operator may give freely; an agent
// spawner may give a role its own capabilities name (role:<r>). A seat's
// role decides whose tasks it takes, so a spawner choosing it freely could
// take another role's work.
func (m *Manager) seatRole(ctx context.Context, c *ep.Call, p *Persona, asked string) (string, *proto.Error) {
	asked = strings.ToLower(strings.TrimSpace(asked))
	if asked == "" || asked == p.Role {
		return p.Role, nil
	}
	if !wire.ValidToken(asked) {
		return "", proto.Refuse(proto.CodeBadRequest, "role %q must be one token of a-z 0-9 _", asked)
	}
	rec, e := m.callerRecord(ctx, c.Caller())
	if e != nil {
		return "", e
	}
	if rec.Profile == wire.ProfileOperator || rec.Can(capRolePrefix+asked) {
		return asked, nil
	}
	held := "no role: capability"
	var roles []string
	for _, cp := range rec.Capabilities {
		if strings.HasPrefix(cp, capRolePrefix) {
			roles = append(roles, cp)
		}
	}
	if len(roles) > 0 {
		held = "only " + strings.Join(roles, ", ")
	}
	return "", proto.Refuse(proto.CodePermissionDenied, "%s may not give its seat role %q: persona %s serves %q, and the spawner holds %s", c.Caller().ID(), asked, p.Name, p.Role, held)
}

func (m *Manager) unreserve(name string) {
	m.mu.Lock()
	delete(m.reserved, name)
	m.mu.Unlock()
}

// spawn accepts at once and runs the seat in the background; the goal's
// one terminal fact says how it went.
func (m *Manager) spawn(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.SpawnArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	if e := m.fencedRefusal(); e != nil {
		return nil, e
	}
	p, err := m.persona(a.Persona)
	if err != nil {
		code := proto.CodeFailedPrecondition
		if errors.Is(err, ErrNoPersona) {
			code = proto.CodeNotFound
		}
		return nil, proto.Refuse(code, "%v", err)
	}
	role, e := m.seatRole(ctx, c, p, a.Role)
	if e != nil {
		return nil, e
	}
	if e := checkTreeArgs(p, a); e != nil {
		return nil, e
	}
	h, err := harnessFor(p)
	if err != nil {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "%v", err)
	}
	base, pinned := p.Name, a.Name != ""
	if pinned {
		base = a.Name
	}
	if !wire.ValidToken(base) && !pinned {
		return nil, proto.Refuse(proto.CodeBadRequest, "persona %q cannot name a seat: a seat's name is one token of A-Z a-z 0-9 _ (at most %d characters); rename the persona's file and its name: line, or give the seat a name with --name", base, wire.MaxTokenLength)
	}
	if !wire.ValidToken(base) {
		return nil, proto.Refuse(proto.CodeBadRequest, "seat name %q must be one token of A-Z a-z 0-9 _", base)
	}
	name, e := m.allocate(base, pinned, m.onMesh(ctx))
	if e != nil {
		return nil, e
	}
	bound := readinessBound(time.Duration(a.ReadinessMs)*time.Millisecond, p, m.opts.Readiness)
	g, again, e := c.AcceptGoal(ctx, ep.GoalOptions{Readiness: bound})
	if e != nil {
		m.unreserve(name)
		return nil, e
	}
	if again {
		m.unreserve(name)
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, s := range m.seats {
			if s.goalID == g.ID() {
				return m.accepted(s, g), nil
			}
		}
		return nil, proto.Refuse(proto.CodeConflict, "goal %s was accepted by an earlier incarnation; read its result", g.ID())
	}
	minted, err := m.opts.Minter.MintSeat(ctx, MintRequest{
		Name: name, Role: role, Subscribe: p.Subscribe, AllowSubscribe: p.AllowSubscribe,
		AllowPublish: p.AllowPublish, Capabilities: p.Capabilities, HostedBy: m.iid,
	})
	if err != nil {
		m.unreserve(name)
		m.failGoal(g, name, proto.Failed(proto.CodeInternal, "minting the seat's identity: %v", err))
		return nil, proto.Failed(proto.CodeInternal, "minting the seat's identity: %v", err)
	}
	s := &Seat{
		name: name, id: minted.Principal, uid: minted.UID, role: role, persona: a.Persona, harness: p.Harness,
		creds: minted.Creds, goalID: g.ID(), spawner: c.Caller(), created: time.Now(), state: StateStarting, hello: make(chan struct{}),
		h: h, wake: make(chan struct{}, 1), bound: bound, budget: p.Launch.Budget,
	}
	m.mu.Lock()
	m.seats[name] = s
	delete(m.reserved, name)
	m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.launch(s, p, a, g)
	}()
	return m.accepted(s, g), nil
}

func (m *Manager) accepted(s *Seat, g *ep.Goal) client.SpawnAccepted {
	fp := g.Fingerprint()
	return client.SpawnAccepted{
		Name: s.name, Owner: s.id.Owner, Actor: s.id.Actor, UID: s.uid, GoalID: g.ID(), Fingerprint: fp,
		ReadinessDeadlineMs: s.bound.Milliseconds(),
		Executor:            client.Executor{LifecycleUID: m.opts.Identity.UID, Epoch: m.server.Epoch()},
	}
}

// seatEnv is the seat's environment (spec control.md §10): the allow-list
// of the manager's own, its harness's connector inputs, the persona's env,
// and the seat's knobs: its identity, its creds file and launch material
// (never a signing key). Nothing else of the manager's environment passes.
func (m *Manager) seatEnv(s *Seat, p *Persona) []string {
	return seatEnvironment(p.Harness, os.Environ(), p.Env, m.seatKnobs(s))
}

// seatKnobs are the seat's COTAL_* variables, KEY=VALUE.
func (m *Manager) seatKnobs(s *Seat) []string {
	knobs := []string{
		"COTAL_SPACE=" + m.opts.Space,
		"COTAL_NAME=" + s.name,
		"COTAL_ROLE=" + s.role,
		"COTAL_ID=" + s.id.ID(),
		"COTAL_LIFECYCLE_UID=" + s.uid,
		"COTAL_URL=" + m.opts.URL,
		"COTAL_CREDS=" + s.creds,
		"COTAL_MANAGER_INSTANCE=" + m.iid,
		"COTAL_LAUNCH_MATERIAL=" + filepath.Join(s.launchDir, materialFile),
	}
	if m.opts.TLS.Pin != "" {
		knobs = append(knobs, "COTAL_TLS_PIN="+m.opts.TLS.Pin)
	}
	if m.opts.TLS.CA != "" {
		knobs = append(knobs, "COTAL_TLS_CA="+m.opts.TLS.CA)
	}
	return knobs
}

// envNames are the names of KEY=VALUE pairs.
func envNames(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		out = append(out, k)
	}
	return out
}

// testHookStarted, when a test sets it, runs between a seat's process
// starting and its launch taking it, with the manager's context.
var testHookStarted func(ctx context.Context)

// launch starts the seat's process and follows it to its goal's outcome:
// ready (it drew output and was still running a moment later), failed (it
// exited first) or, after the readiness bound, uncertain (the goal's own
// timer writes that; the seat is kept and watched).
func (m *Manager) launch(s *Seat, p *Persona, a client.SpawnArgs, g *ep.Goal) {
	args := append([]string(nil), p.Args...)
	if a.Prompt != "" && p.Harness != "command" {
		args = append(args, a.Prompt)
	}
	cwd := p.Cwd
	if a.Cwd != "" {
		cwd = a.Cwd
	}
	tree, err := m.makeTree(s, p, a)
	if tree != "" {
		cwd = tree
	}
	var proc *pty.Seat
	if err == nil {
		proc, err = m.startSeat(m.ctx, s, p, args, cwd)
	}
	if err == nil && testHookStarted != nil {
		testHookStarted(m.ctx)
	}
	if err != nil {
		m.retire(s)
		m.endTree(s)
		s.mu.Lock()
		s.state, s.exitAt = StateExited, time.Now()
		s.mu.Unlock()
		m.failGoal(g, s.name, proto.Failed(proto.CodeFailedPrecondition, "could not start %s: %v", p.Path, err))
		return
	}
	m.follow(s, p, proc, g, false)
}

// follow runs a started seat: its connector joins, it comes up (at once
// when taken back from its keeper: it was up before), goes online and is
// injected into, and when its process ends it goes offline and its
// credential is revoked. g is its spawn's goal; nil for a seat taken back
// or resumed, which no spawn waits for. A seat whose keeper is let go of
// (the manager closing with its seats kept) only goes offline.
func (m *Manager) follow(s *Seat, p *Persona, proc *pty.Seat, g *ep.Goal, up bool) {
	ctx := m.ctx
	fctx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	}
	m.adopt(s, proc)
	// Past the readiness bound a seat still starting reads uncertain (its
	// goal says so too); it may still come up, and then reads ready.
	if s.bound == 0 { // taken back or resumed: no spawn asked
		s.bound = readinessBound(0, p, m.opts.Readiness)
	}
	bound := time.AfterFunc(s.bound, func() {
		s.mu.Lock()
		if s.state == StateStarting {
			s.state = StateUncertain
		}
		s.mu.Unlock()
	})
	defer bound.Stop()
	if g != nil {
		c, cancel := fctx()
		_ = g.Progress(c, "running", client.SpawnProgress{Step: client.StepLaunched, PID: proc.PID()})
		cancel()
	}

	// The connector is the seat's identity on the mesh: it joins as the
	// process starts, so the seat's own `cotal mcp` finds it.
	joinErr := m.connect(s, p)
	if errors.Is(joinErr, errExitedEarly) {
		joinErr = nil // not a mesh problem: it fails below as exited before ready
	}
	ready := false
	if joinErr == nil && proc.Running() {
		ready = up || m.awaitReady(ctx, s, p, proc, g)
	}
	switch {
	case joinErr != nil:
		m.uncertainGoal(g, fmt.Sprintf("%s is running but its connector could not join the mesh (%v); it is not on the mesh", s.name, joinErr))
	case ready:
		// Ready: now it is on the roster (its presence is the spec's
		// readiness fact).
		c, cancel := fctx()
		err := s.connector().GoOnline(c)
		cancel()
		if err != nil {
			m.uncertainGoal(g, fmt.Sprintf("%s is ready but could not go online: %v", s.name, err))
			break
		}
		s.mu.Lock()
		s.state, s.readyAt = StateReady, time.Now()
		s.mu.Unlock()
		s.mirror() // what its harness reported before it was on the roster
		if injects(p) {
			m.startInjector(s, s.connector(), proc)
		}
		if g == nil {
			break
		}
		c, cancel = fctx()
		_ = g.Progress(c, "running", client.SpawnProgress{Step: client.StepReady})
		err = g.Succeed(c, client.SpawnSucceeded{Name: s.name, Agent: p.Harness, ID: s.id.ID(), Mode: "pty", LifecycleUID: s.uid, Role: s.role, PID: proc.PID()})
		cancel()
		if errors.Is(err, ep.ErrGoalTerminal) {
			m.logf("seat %s came up after its goal ended uncertain", s.name)
		}
	}
	<-proc.Done()
	exitAt := time.Now()
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn != nil {
		// Offline at once, not after a TTL; and before the seat reads
		// exited, which is what a stop waits for.
		_ = conn.Close()
	}
	if errors.Is(proc.Lost(), pty.ErrDetached) {
		// Let go of into its keeper's custody: it runs on, and keeps its
		// credential for the manager that takes it back.
		s.mu.Lock()
		s.conn = nil
		s.mu.Unlock()
		return
	}
	lost := m.lostKeeper(s, proc)
	if !s.isPreserved() {
		m.retire(s) // its creds file must not outlive it; before exited, which a stop waits for
	}
	s.mu.Lock()
	s.conn = nil
	s.state, s.exitAt = StateExited, exitAt
	if lost {
		s.state = StateLost
	}
	s.mu.Unlock()
	m.awaitKeeper(s)
	m.cleanCustody(s)
	m.endTree(s)
	if !ready && joinErr == nil {
		code, sig, _ := proc.ExitStatus()
		how := fmt.Sprintf("exit status %d", code)
		if sig != "" {
			how = "killed by " + sig
		}
		if lost {
			how = "its keeper went away"
		}
		m.failGoal(g, s.name, proto.Failed(proto.CodeFailedPrecondition, "%s exited before it was ready (%s); last lines:\n%s", s.name, how, tail(proc, 10)))
	}
}

// failGoal writes a spawn's failure as its goal's terminal fact. A goal
// that cannot take it (it already ended uncertain, or the write failed)
// would hide it, so then the failure goes to the log.
func (m *Manager) failGoal(g *ep.Goal, name string, e *proto.Error) {
	if g == nil {
		m.logf("seat %s: %s", name, strings.ReplaceAll(e.Message, "\n", "\n  "))
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), 5*time.Second)
	defer cancel()
	err := g.Fail(ctx, e)
	if err == nil {
		return
	}
	why := fmt.Sprintf("writing it on goal %s failed (%v)", g.ID(), err)
	if errors.Is(err, ep.ErrGoalTerminal) {
		why = fmt.Sprintf("goal %s had already ended", g.ID())
	}
	m.logf("seat %s: spawn failed, and %s: %s", name, why, strings.ReplaceAll(e.Message, "\n", "\n  "))
}

// connect puts a seat on the mesh, not yet on the roster (it goes online
// when the seat is ready): the connector acts for the seat on the
// manager's own trusted connection (the seat's credential has no JetStream
// right, so the seat process reads nothing from storage itself): it writes
// the seat's presence, binds its DM, role and backstop durables and holds
// its channels, enforcing the seat's read and post lists.
func (m *Manager) connect(s *Seat, p *Persona) error {
	ctx, cancel := context.WithTimeout(m.ctx, 10*time.Second)
	defer cancel()
	act := &mesh.Identity{
		Principal: s.id, UID: s.uid, Role: s.role, Subscribe: p.Subscribe,
		AllowSubscribe: p.AllowSubscribe, AllowPublish: p.AllowPublish,
	}
	if s.creds == "" { // an open mesh: no ACLs, live only
		act.Profile = wire.ProfileOpen
	}
	o := mesh.Options{
		Conn: m.opts.Conn, Space: m.opts.Space, Act: act, Description: p.Description, Tags: p.Tags, Offline: true,
		Meta:      map[string]string{presence.MetaManager: m.iid},
		Returning: s.returning, DMFrom: s.dmFrom,
		Logf: func(format string, args ...any) { m.logf("seat %s: "+format, append([]any{s.name}, args...)...) },
	}
	conn, err := mesh.Connect(ctx, o)
	if err != nil {
		m.logf("seat %s is running but could not join the mesh: %v", s.name, err)
		s.mu.Lock()
		s.state = StateUncertain
		s.mu.Unlock()
		return err
	}
	initialModes(conn, p, func(format string, args ...any) { m.logf("seat %s: "+format, append([]any{s.name}, args...)...) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pty == nil || !s.pty.Running() {
		_ = conn.Close()
		return errExitedEarly
	}
	s.conn = conn
	return nil
}

// initialModes sets the agent file's quiet: and muted: channels as the
// connector's channel modes before anything is delivered to the seat: they
// are its starting modes, which the agent may change for the session (spec
// §12). The file was checked when it was read (concrete channels within
// the read ACL, quiet and muted disjoint), so a refusal here is only
// logged.
func initialModes(conn *mesh.Endpoint, p *Persona, logf func(string, ...any)) {
	for _, l := range []struct {
		mode mesh.ChannelMode
		chs  []string
	}{{mesh.ModeQuiet, p.Quiet}, {mesh.ModeMuted, p.Muted}} {
		for _, ch := range l.chs {
			if err := conn.SetChannelMode(ch, l.mode); err != nil {
				logf("setting #%s %s from the agent file: %v", ch, l.mode, err)
			}
		}
	}
}

// errExitedEarly is connect's answer when the process exited before its
// connector joined.
var errExitedEarly = errors.New("the process exited before its connector joined")

// awaitReady waits for the seat's readiness rule (harness.go): its MCP
// client connected to its `cotal mcp`, or its first output and still
// running a moment later. It reports false when the process exits first.
func (m *Manager) awaitReady(ctx context.Context, s *Seat, p *Persona, proc *pty.Seat, g *ep.Goal) bool {
	if readiness(p) == ReadyMCP && s.h.reports() {
		return m.awaitReported(ctx, s, proc, g)
	}
	if readiness(p) == ReadyMCP {
		select {
		case <-s.hello:
			return true
		case <-proc.Done():
		case <-ctx.Done():
		}
		return false
	}
	select {
	case <-proc.FirstOutput():
		return m.drewAndRuns(ctx, proc)
	case <-proc.Done():
	case <-ctx.Done():
	}
	return false
}

// outputQuiet is how long a command seat's output must pause, after its
// first output, with every thread of the program asleep, for it to count
// as drawn: a program that exits at once is never asleep between its last
// write and its exit, however long a loaded machine makes that.
const outputQuiet = 20 * time.Millisecond

// drewAndRuns is the output-ready rule once the first output came: the
// output paused for outputQuiet with the process alive and waiting (every
// thread asleep: procid.ID.Waiting), or, for a program that never pauses, the process still runs
// Settle after. It reports false when the process exits first.
func (m *Manager) drewAndRuns(ctx context.Context, proc *pty.Seat) bool {
	out, stop := proc.Subscribe()
	defer stop()
	bound := time.NewTimer(m.opts.Settle)
	defer bound.Stop()
	// The pause counts from the last output, which may have come while
	// the seat's connector joined, before this watch began.
	untilQuiet := func() time.Duration { return outputQuiet - time.Since(proc.LastOutput()) }
	quiet := time.NewTimer(max(untilQuiet(), 0))
	defer quiet.Stop()
	for {
		select {
		case <-proc.Done():
			return false
		case <-ctx.Done():
			return false
		case <-bound.C:
			return proc.Running()
		case <-quiet.C:
			if left := untilQuiet(); left > 0 {
				quiet.Reset(left) // output came since the timer was set
				continue
			}
			id := procid.ID{PID: proc.PID()}
			if !proc.Running() || !id.Alive() {
				continue // exited, or exiting: Done says which soon; only the bound calls it ready now
			}
			if id.Waiting() {
				return true
			}
			// Quiet but still computing (or, on a loaded machine, between
			// its last write and its exit): drawn only once it waits.
			quiet.Reset(outputQuiet)
		case _, ok := <-out:
			if !ok {
				out = nil // a lagging subscriber: only the bound decides
				quiet.Stop()
				continue
			}
			quiet.Reset(outputQuiet)
		}
	}
}

// uncertainGoal ends a spawn uncertain, naming why: the seat is kept.
func (m *Manager) uncertainGoal(g *ep.Goal, why string) {
	if g == nil {
		m.logf("%s", why)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), 5*time.Second)
	defer cancel()
	if _, err := g.Finish(ctx, ep.GoalUncertain, ep.Uncertain{Reason: why}, nil); err != nil {
		m.logf("%s (writing it on goal %s: %v)", why, g.ID(), err)
	}
}

// onMesh reports whether a name is taken on the mesh right now: an
// unrevoked credential of it exists, or its presence key holds a record
// that is not offline (the bucket's TTL drops silent ones).
func (m *Manager) onMesh(ctx context.Context) func(string) bool {
	js, err := jetstream.New(m.opts.Conn)
	if err != nil {
		return m.opts.Minter.Taken
	}
	kv, err := js.KeyValue(ctx, wire.PresenceBucket(m.opts.Space))
	if err != nil {
		return m.opts.Minter.Taken
	}
	return func(name string) bool {
		if m.opts.Minter.Taken(name) {
			return true
		}
		e, err := kv.Get(ctx, wire.Principal{Owner: "local", Actor: name}.ID())
		if err != nil {
			return false
		}
		var rec struct {
			Status string `json:"status"`
		}
		return json.Unmarshal(e.Value(), &rec) == nil && rec.Status != "offline"
	}
}
