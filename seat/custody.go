package seat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/procid"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/keeper"
	"github.com/cotal-go/cotal/seat/pty"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// Custody (DESIGN.md): a seat's process and its pty are held by a keeper
// of its own (seat/keeper), not by the manager's process, whenever the
// manager has a launcher and a run directory. A crash, a kill -9 or an
// upgrade of the manager leaves the seat running; the next manager of the
// same instance takes it back at its start (reattach): same lifecycle,
// credential and connector durables, the screen painted as it is. Each
// keeper directory holds the manager's record of its seat (seat.json) and
// the persona it was spawned from as resolved then (persona.json: from an
// agent file or the space's manifest), so a seat is taken back as it was
// spawned, whatever became of the persona since.

// Seat states beyond the spawn's.
const (
	// StateLost: the seat's keeper went away, taking its pty; what was
	// left of the seat was ended and its credential revoked.
	StateLost = "lost"
)

// Custody modes as ps shows them.
const (
	CustodyKeeper = "keeper" // a keeper process of its own holds the seat: it outlives the manager
	CustodyLegacy = "legacy" // the manager's own process holds it: it ends with the manager
)

const (
	custodyFile    = "seat.json"
	personaFile    = "persona.json" // the persona as resolved at the spawn
	custodyVersion = 1
)

// custodyRecord is seat.json: what a manager needs to take a seat back.
type custodyRecord struct {
	V         int            `json:"v"`
	Manager   string         `json:"manager"` // the instance that holds it
	Name      string         `json:"name"`
	Principal wire.Principal `json:"principal"`
	UID       string         `json:"uid"`
	Role      string         `json:"role,omitempty"`
	Persona   string         `json:"persona"`
	Harness   string         `json:"harness"`
	Creds     string         `json:"creds,omitempty"`
	GoalID    string         `json:"goalId,omitempty"`
	Spawner   proto.Caller   `json:"spawner"`
	Created   time.Time      `json:"created"`
	LaunchDir string         `json:"launchDir"`
	Cwd       string         `json:"cwd,omitempty"`
	// Session is the harness's own session id, as its hooks last said.
	Session string `json:"session,omitempty"`
	// Resumed and ResumedFrom say the seat was restarted from a
	// preserved inventory, when, and from which harness session.
	Resumed     time.Time `json:"resumed,omitzero"`
	ResumedFrom string    `json:"resumedFrom,omitempty"`
}

// KeptBy is what a Minter may also do: record that a seat's process is
// held by the keeper id, so the credential lives as long as that keeper
// does (and is revoked at the next start once it is gone), and tell
// whether a lifecycle's credential is still unrevoked.
type KeptBy interface {
	KeptBy(p wire.Principal, uid string, keeper procid.ID) error
	Holds(p wire.Principal, uid string) bool
}

// custody reports whether seats go to keepers.
func (m *Manager) custody() bool {
	return m.opts.Launcher != "" && m.opts.RunDir != "" && !m.opts.NoCustody
}

// startKept starts the seat's process in a keeper and takes it: the keeper
// runs it through the sandbox launcher, as startSeat would.
func (m *Manager) startKept(ctx context.Context, s *Seat, p *Persona, args, env []string, cwd string) (*pty.Seat, error) {
	path, err := exec.LookPath(p.Path)
	if err != nil {
		return nil, err
	}
	if cwd == "" {
		// A seat started here would inherit this process's directory; the
		// keeper's is "/".
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("the manager's working directory, for the seat's: %w", err)
		}
	}
	dir := keeper.Dir(m.opts.RunDir, s.name, s.uid)
	if err := os.MkdirAll(keeper.Root(m.opts.RunDir), 0o700); err != nil {
		return nil, err
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.keepDir, s.cwd = dir, cwd
	s.mu.Unlock()
	if err := m.writeCustody(s, p); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	st, err := keeper.Start(ctx, m.opts.Launcher, dir, keeper.Plan{
		Path: path, Argv0: p.Path, Args: args, Env: env, Dir: cwd,
		Launcher: m.opts.Launcher, NoNamespace: slices.Contains(m.opts.SandboxSkip, sandbox.Namespace),
		Ring: m.opts.KeepRing,
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// The keeper is this process's child only until this process ends;
	// whoever takes the seat back later is not its parent.
	go func() { _ = st.Wait() }()
	if k, ok := m.opts.Minter.(KeptBy); ok {
		if err := k.KeptBy(s.id, s.uid, st.Record.Keeper); err != nil {
			m.logf("seat %s: recording its keeper with its credential: %v", s.name, err)
		}
	}
	proc, w, err := m.take(dir)
	if err != nil {
		_ = st.Record.Seat.Signal(syscall.SIGKILL)
		_ = st.Record.Keeper.Signal(syscall.SIGKILL)
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("taking the seat from its keeper: %w", err)
	}
	nested := m.nestedNote(s, p, keptSandboxed(w.Sandbox), w.Nested)
	s.mu.Lock()
	s.sandbox, s.nested, s.custodyMode = w.Sandbox, nested, CustodyKeeper
	s.mu.Unlock()
	return proc, nil
}

// keptSandboxed reports whether a keeper's account of its seat's sandbox
// (sandbox.Report.String) is a sandbox.
func keptSandboxed(rep string) bool {
	return strings.HasPrefix(rep, sandbox.Namespace) || strings.HasPrefix(rep, sandbox.Landlock)
}

// take connects to the keeper of dir and makes a Seat of what it holds.
func (m *Manager) take(dir string) (*pty.Seat, keeper.Welcome, error) {
	c, w, err := keeper.Dial(dir, m.iid)
	if err != nil {
		return nil, w, err
	}
	var last time.Time
	if w.LastOutMs != 0 {
		last = time.UnixMilli(w.LastOutMs)
	}
	proc, err := pty.Remote(c, pty.RemoteInfo{PID: w.Seat.PID, Started: time.UnixMilli(w.StartedMs), Cols: w.Cols, Rows: w.Rows, LastOutput: last})
	if err != nil {
		_ = c.Close()
		return nil, w, err
	}
	return proc, w, nil
}

// writeCustody writes the seat's record and the persona it is spawned
// from, as resolved (from the project's agent file or the space's
// manifest), into its keeper directory.
func (m *Manager) writeCustody(s *Seat, p *Persona) error {
	b, err := json.MarshalIndent(p.AgentFile, "", "  ")
	if err != nil {
		return err
	}
	if err := config.WriteFileAtomic(filepath.Join(s.keepDir, personaFile), b, 0o600); err != nil {
		return fmt.Errorf("writing the seat's persona: %w", err)
	}
	return m.saveCustody(s)
}

// saveCustody rewrites the seat's record from the seat (a new harness
// session, a resume); a seat without a keeper has none.
func (m *Manager) saveCustody(s *Seat) error {
	s.mu.Lock()
	dir := s.keepDir
	rec := custodyRecord{V: custodyVersion, Manager: m.iid, Name: s.name, Principal: s.id, UID: s.uid, Role: s.role,
		Persona: s.persona, Harness: s.harness, Creds: s.creds, GoalID: s.goalID, Spawner: s.spawner, Created: s.created,
		LaunchDir: s.launchDir, Cwd: s.cwd, Session: s.agent.session, Resumed: s.resumedAt, ResumedFrom: s.resumedFrom}
	s.mu.Unlock()
	if dir == "" {
		return nil
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFileAtomic(filepath.Join(dir, custodyFile), b, 0o600)
}

func readCustody(dir string) (custodyRecord, error) {
	var r custodyRecord
	b, err := os.ReadFile(filepath.Join(dir, custodyFile))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, custodyFile), err)
	}
	return r, nil
}

// keptPersona is the persona a kept seat was spawned from, as its keeper
// directory keeps it; its harness's binary need not be installed any
// more, since nothing is started from it.
func keptPersona(dir string) (*Persona, error) {
	b, err := os.ReadFile(filepath.Join(dir, personaFile))
	if err != nil {
		return nil, err
	}
	var a config.AgentFile
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, personaFile), err)
	}
	p, err := personaOf(&a)
	if err == nil || !errors.Is(err, ErrHarnessMissing) {
		return p, err
	}
	p = &Persona{AgentFile: &a, Harness: a.Agent, Cwd: a.Launch.Cwd, Env: a.Launch.Env}
	if p.Harness == "" {
		p.Harness = "claude"
	}
	return p, nil
}

// reattach takes back every seat the keepers hold for this instance, in
// parallel, and records the ones that were lost or ended meanwhile. It
// returns once each is settled one way or the other.
func (m *Manager) reattach() {
	if m.opts.RunDir == "" {
		return
	}
	dirs, err := keeper.List(m.opts.RunDir)
	if err != nil {
		m.logf("listing the seats in custody: %v", err)
		return
	}
	var wg sync.WaitGroup
	for _, dir := range dirs {
		rec, err := readCustody(dir)
		if errors.Is(err, fs.ErrNotExist) {
			if lost, _ := keeper.Lost(dir); lost {
				_ = os.RemoveAll(dir) // a start that never got as far as its record
			}
			continue
		}
		if err != nil {
			m.logf("seat in custody at %s: %v", dir, err)
			continue
		}
		if rec.Manager != m.iid {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.takeBack(dir, rec)
		}()
	}
	wg.Wait()
}

// takeBack takes one kept seat back, or says why it cannot.
func (m *Manager) takeBack(dir string, rec custodyRecord) {
	s := &Seat{
		name: rec.Name, id: rec.Principal, uid: rec.UID, role: rec.Role, persona: rec.Persona, harness: rec.Harness,
		creds: rec.Creds, goalID: rec.GoalID, spawner: rec.Spawner, created: rec.Created, launchDir: rec.LaunchDir,
		keepDir: dir, cwd: rec.Cwd, custodyMode: CustodyKeeper, resumedAt: rec.Resumed, resumedFrom: rec.ResumedFrom,
		state: StateStarting, hello: make(chan struct{}), wake: make(chan struct{}, 1), returning: true,
	}
	s.agent.session = rec.Session
	s.helloOnce.Do(func() { close(s.hello) })
	m.findTree(s)
	m.mu.Lock()
	m.seats[s.name] = s
	m.mu.Unlock()
	p, err := keptPersona(dir)
	if err == nil {
		s.h, err = harnessFor(p)
		s.mu.Lock()
		s.budget = p.Launch.Budget
		s.mu.Unlock()
	}
	if x, xerr := keeper.ReadExit(dir); xerr == nil {
		how := fmt.Sprintf("exited %d", x.Code)
		if x.Signal != "" {
			how = "killed " + x.Signal
		}
		m.logf("seat %s ended while no manager held it (%s at %s)", s.name, how, x.At.Local().Format(time.RFC3339))
		m.settle(s, StateExited, x.At, how, "", true)
		return
	}
	proc, w, derr := m.take(dir)
	var refused *keeper.RefusedError
	switch {
	case errors.As(derr, &refused):
		// A keeper this cotal cannot speak with (an older or newer one):
		// the seat runs on; it is not ours to end.
		m.settle(s, StateLost, time.Now(), "lost", fmt.Sprintf("its keeper cannot be taken over: %v", refused), false)
		return
	case derr != nil:
		lost, krec := keeper.Lost(dir)
		if !lost {
			m.settle(s, StateLost, time.Now(), "lost", fmt.Sprintf("its keeper (%s) runs but does not answer: %v", krec.Keeper, derr), false)
			return
		}
		at, why := lostWhen(dir, krec)
		if n := keeper.EndOrphan(krec); n > 0 {
			why += fmt.Sprintf("; ended what was left of it (%d processes)", n)
		}
		m.logf("seat %s was lost: %s", s.name, why)
		m.settle(s, StateLost, at, "lost", why, true)
		return
	}
	if err != nil {
		_ = proc.Stop(context.Background(), true)
		m.settle(s, StateLost, time.Now(), "lost", fmt.Sprintf("its persona cannot be read from its keeper directory any more (%v); it was stopped", err), true)
		return
	}
	if k, ok := m.opts.Minter.(KeptBy); ok && !k.Holds(s.id, s.uid) {
		_ = proc.Stop(context.Background(), true)
		m.settle(s, StateLost, time.Now(), "lost", "its credential was revoked while no manager held it; it was stopped", true)
		return
	}
	nested := m.nestedNote(s, p, keptSandboxed(w.Sandbox), w.Nested)
	s.mu.Lock()
	s.sandbox, s.nested, s.reattachedAt, s.detached = w.Sandbox, nested, time.Now(), w.Detached
	s.mu.Unlock()
	if d := w.Detached; d != nil {
		m.logf("seat %s taken back from its keeper (%s); %d bytes written meanwhile kept, %d dropped", s.name, w.Keeper, d.Kept, d.Dropped)
	} else {
		m.logf("seat %s taken back from its keeper (%s)", s.name, w.Keeper)
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.follow(s, p, proc, nil, true)
	}()
}

// lostWhen is when a seat whose keeper is gone was last known held, and
// why it is gone.
func lostWhen(dir string, krec keeper.Record) (time.Time, string) {
	_, seen, err := keeper.ReadRecord(dir)
	if err != nil {
		fi, serr := os.Stat(dir)
		if serr != nil {
			return time.Now(), "its keeper never started"
		}
		return fi.ModTime(), "its keeper never said it ran"
	}
	boot := procid.Booted()
	if !boot.IsZero() && seen.Before(boot) {
		return boot, fmt.Sprintf("the machine restarted (at %s), ending its keeper (%s), last seen %s", boot.Local().Format(time.RFC3339), krec.Keeper, seen.Local().Format(time.RFC3339))
	}
	return seen, fmt.Sprintf("its keeper (%s) died; last seen alive %s", krec.Keeper, seen.Local().Format(time.RFC3339))
}

// settle records a kept seat that will not run here: ended, or lost.
// retire revokes its credential and removes its directories.
func (m *Manager) settle(s *Seat, state string, at time.Time, process, why string, retire bool) {
	s.mu.Lock()
	s.state, s.exitAt, s.endedHow, s.lostWhy = state, at, process, why
	if state == StateLost {
		s.lostAt = at
	}
	s.mu.Unlock()
	if !retire {
		return
	}
	m.retire(s)
	m.cleanCustody(s)
	m.endTree(s)
}

// lostKeeper handles a seat whose keeper went away while this manager held
// it: what is left of the seat is ended by its recorded identity. It
// reports whether that was the end.
func (m *Manager) lostKeeper(s *Seat, proc *pty.Seat) bool {
	if !errors.Is(proc.Lost(), keeper.ErrLost) {
		return false
	}
	s.mu.Lock()
	dir := s.keepDir
	s.mu.Unlock()
	why := "its keeper went away"
	if krec, _, err := keeper.ReadRecord(dir); err == nil {
		why = fmt.Sprintf("its keeper (%s) went away", krec.Keeper)
		if n := keeper.EndOrphan(krec); n > 0 {
			why += fmt.Sprintf("; ended what was left of it (%d processes)", n)
		}
	}
	m.logf("seat %s was lost: %s", s.name, why)
	s.mu.Lock()
	s.lostAt, s.lostWhy, s.endedHow = time.Now(), why, "lost"
	s.mu.Unlock()
	return true
}

// awaitKeeper waits, at most keeper.FinishWait and a little more, for the
// keeper of a seat whose process ended to end too: it goes once it has
// told this manager how, so a Close that stopped the seats returns with
// their keepers gone as well.
func (m *Manager) awaitKeeper(s *Seat) {
	s.mu.Lock()
	dir := s.keepDir
	s.mu.Unlock()
	if dir == "" {
		return
	}
	rec, _, err := keeper.ReadRecord(dir)
	if err != nil {
		return
	}
	deadline := time.Now().Add(keeper.FinishWait + time.Second)
	for rec.Keeper.Alive() {
		if time.Now().After(deadline) {
			m.logf("seat %s: its keeper (%s) outlives it", s.name, rec.Keeper)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cleanCustody removes a seat's keeper and launch directories once its
// lifecycle is over; a preserved seat keeps its launch directory (its
// credential), for the resume.
func (m *Manager) cleanCustody(s *Seat) {
	s.mu.Lock()
	keep, launch, preserved := s.keepDir, s.launchDir, s.preserved
	s.mu.Unlock()
	if keep != "" {
		if err := os.RemoveAll(keep); err != nil {
			m.logf("seat %s: removing its keeper directory: %v", s.name, err)
		}
	}
	if launch != "" && !preserved && m.opts.RunDir != "" && strings.HasPrefix(launch, m.opts.RunDir+string(os.PathSeparator)) {
		if err := os.RemoveAll(launch); err != nil {
			m.logf("seat %s: removing its launch directory: %v", s.name, err)
		}
	}
}

// Release stops serving and lets go of the seats their keepers hold,
// which run on for the next manager of this instance to take back; a seat
// held by this process itself (no keeper) is stopped, as Close would.
func (m *Manager) Release() error {
	err := m.server.Close()
	m.setClosing(closeRelease)
	m.endSessions("", attach.ReasonManagerRestart)
	m.mu.Lock()
	seats := make([]*Seat, 0, len(m.seats))
	for _, s := range m.seats {
		seats = append(seats, s)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range seats {
		s.mu.Lock()
		p, kept := s.pty, s.custodyMode == CustodyKeeper
		s.mu.Unlock()
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if kept && p.Running() {
				p.Detach()
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), closeStopWait)
			defer cancel()
			_ = s.stop(ctx, true)
		}()
	}
	wg.Wait()
	m.cancel()
	m.wg.Wait()
	return err
}

// Kept names the seats held by keepers (what Release leaves running).
func (m *Manager) Kept() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for n, s := range m.seats {
		s.mu.Lock()
		kept := s.custodyMode == CustodyKeeper
		s.mu.Unlock()
		if kept && s.running() {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Custody is what the manager's start made of the seats its keepers
// held: taken back, lost, ended meanwhile. The host says it as it starts.
type Custody struct {
	Reattached []string
	Resumed    []string // restarted from a preserved inventory
	Lost       []LostSeat
	Ended      []LostSeat // ended while no manager held them
}

// LostSeat is a seat that did not come back, when, and why.
type LostSeat struct {
	Name string
	At   time.Time
	Why  string
}

// CustodyReport is what the start made of the kept seats.
func (m *Manager) CustodyReport() Custody {
	m.mu.Lock()
	seats := make([]*Seat, 0, len(m.seats))
	for _, s := range m.seats {
		seats = append(seats, s)
	}
	m.mu.Unlock()
	var c Custody
	for _, s := range seats {
		s.mu.Lock()
		switch {
		case !s.reattachedAt.IsZero():
			c.Reattached = append(c.Reattached, s.name)
		case !s.resumedAt.IsZero() && !s.ended():
			c.Resumed = append(c.Resumed, s.name)
		case s.state == StateLost:
			c.Lost = append(c.Lost, LostSeat{Name: s.name, At: s.lostAt, Why: s.lostWhy})
		case s.state == StateExited && s.endedHow != "":
			c.Ended = append(c.Ended, LostSeat{Name: s.name, At: s.exitAt, Why: s.endedHow})
		}
		s.mu.Unlock()
	}
	sort.Strings(c.Reattached)
	sort.Strings(c.Resumed)
	sort.Slice(c.Lost, func(i, j int) bool { return c.Lost[i].Name < c.Lost[j].Name })
	sort.Slice(c.Ended, func(i, j int) bool { return c.Ended[i].Name < c.Ended[j].Name })
	return c
}

// CustodyOf is what a census says of the seats in custody, for a client
// of a manager running elsewhere: the same as that manager's
// CustodyReport.
func CustodyOf(rows []client.CensusRow) Custody {
	var c Custody
	for _, r := range rows {
		switch {
		case r.LostMs != 0:
			c.Lost = append(c.Lost, LostSeat{Name: r.Name, At: time.UnixMilli(r.LostMs), Why: r.Lost})
		case r.EndedAway:
			c.Ended = append(c.Ended, LostSeat{Name: r.Name, At: time.UnixMilli(r.ExitedMs), Why: r.Process})
		case r.ReattachedMs != 0:
			c.Reattached = append(c.Reattached, r.Name)
		case r.ResumedMs != 0 && r.State != StateExited && r.State != StateLost:
			c.Resumed = append(c.Resumed, r.Name)
		}
	}
	return c
}

// Lines says the report in sentences, one a seat or group: which seats
// were taken back, which were lost and when, which ended meanwhile.
func (c Custody) Lines() []string {
	const at = "2006-01-02 15:04:05"
	var out []string
	if len(c.Reattached) > 0 {
		out = append(out, fmt.Sprintf("took back %d seat(s) from their keepers: %s", len(c.Reattached), strings.Join(c.Reattached, ", ")))
	}
	if len(c.Resumed) > 0 {
		out = append(out, fmt.Sprintf("resumed %d seat(s) that `down --preserve-state` preserved: %s", len(c.Resumed), strings.Join(c.Resumed, ", ")))
	}
	for _, l := range c.Lost {
		out = append(out, fmt.Sprintf("seat %s was lost (%s): %s", l.Name, l.At.Local().Format(at), l.Why))
	}
	for _, e := range c.Ended {
		out = append(out, fmt.Sprintf("seat %s ended while no mesh ran (%s, %s)", e.Name, e.Why, e.At.Local().Format(at)))
	}
	return out
}
