package seat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/procid"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/keeper"
)

// Preserve and resume (DESIGN.md, custody): `cotal down --preserve-state`
// has the mesh's manager fence itself (no new spawns), stop its seats
// without ending their lifecycles (credentials, durable memberships and
// inboxes stay), and write an inventory of them with the cut: where each
// of their durable consumers stood once they were stopped. The command
// that asked then proves every seat process gone and the broker
// unreachable, and only then writes the ready mark. The next manager of
// the same instance restarts every seat of a ready inventory under the
// same principal and lifecycle uid, its harness resuming its own session.

// Files of the preserve directory.
const (
	inventoryFile    = "inventory.json" // Inventory, written by the manager as it stops its seats
	readyFile        = "ready.json"     // ReadyMark, written last, by whoever proved the stop
	inventoryVersion = 1
)

// Inventory is what a preserving stop leaves for the next start.
type Inventory struct {
	V       int             `json:"v"`
	Space   string          `json:"space"`
	Manager string          `json:"manager"` // the instance whose seats these are
	URL     string          `json:"url"`     // the broker the seats used, proved unreachable before the mark
	Written time.Time       `json:"written"`
	Seats   []PreservedSeat `json:"seats"`
	// Streams is the last sequence of every stream the seats read, once
	// they were stopped.
	Streams map[string]uint64 `json:"streams"`
}

// PreservedSeat is one seat of an inventory: what restarts it as it was.
// Creds is the path of its creds file (in its launch directory, kept),
// never the credential itself.
type PreservedSeat struct {
	Name      string          `json:"name"`
	Principal wire.Principal  `json:"principal"`
	UID       string          `json:"uid"`
	Role      string          `json:"role,omitempty"`
	Persona   string          `json:"persona"`
	Harness   string          `json:"harness"`
	Cwd       string          `json:"cwd,omitempty"`
	Session   string          `json:"session,omitempty"` // the harness's own session id, as its hooks last said
	Creds     string          `json:"creds,omitempty"`
	LaunchDir string          `json:"launchDir"`
	Spawner   proto.Caller    `json:"spawner"`
	Created   time.Time       `json:"created"`
	Agent     json.RawMessage `json:"agent"` // the persona as resolved at its spawn
	// Process and Keeper are the seat's process and its keeper, which
	// the stop proves gone before the inventory is marked ready.
	Process procid.ID `json:"process"`
	Keeper  procid.ID `json:"keeper"`
	// Cut is where each durable consumer of the seat stood once it was
	// stopped: what it had been handed, what it had acknowledged.
	Cut []ConsumerCut `json:"cut"`
}

// ConsumerCut is one durable consumer's position at the cut.
type ConsumerCut struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	Delivered  uint64 `json:"delivered"`  // the last stream sequence handed to the seat
	AckFloor   uint64 `json:"ackFloor"`   // every sequence up to it acknowledged
	AckPending int    `json:"ackPending"` // handed over, not acknowledged: it comes again
}

// ReadyMark is ready.json: the inventory it vouches for (by its sha256)
// and what was proved before it was written.
type ReadyMark struct {
	Inventory string    `json:"inventory"`
	Proved    time.Time `json:"proved"`
	Processes int       `json:"processes"` // seat and keeper processes proved gone
	Broker    string    `json:"broker"`    // what was proved of the broker (its address unreachable)
}

// fencedRefusal answers a spawn while the manager preserves its seats;
// nil when it does not.
func (m *Manager) fencedRefusal() *proto.Error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.fenced {
		return nil
	}
	return m.fenceError()
}

// fenceError is the refusal of a spawn by a fenced manager.
func (m *Manager) fenceError() *proto.Error {
	return proto.Refuse(proto.CodeUnavailable, "manager %s is going down with --preserve-state: it starts no new seat; spawn again after the next `cotal up` has resumed its seats", m.iid)
}

// Preserve fences the manager (every spawn from now on is refused, saying
// why), stops every running seat without ending its lifecycle, records
// the cut and writes the inventory into dir (not ready: the caller proves
// the stop, then marks it). A seat that cannot be preserved is stopped
// as Close would and named in the error.
func (m *Manager) Preserve(ctx context.Context, dir string) (Inventory, error) {
	m.mu.Lock()
	m.fenced = true
	m.mu.Unlock()
	// Spawns that had a name before the fence go on to a seat: wait for
	// them to have one, so none starts after the inventory is taken.
	for {
		m.mu.Lock()
		n := len(m.reserved)
		m.mu.Unlock()
		if n == 0 || ctx.Err() != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	inv := Inventory{V: inventoryVersion, Space: m.opts.Space, Manager: m.iid, URL: m.opts.URL, Streams: map[string]uint64{}}
	var bad []string
	var held []*Seat
	m.mu.Lock()
	for _, s := range m.seats {
		if s.running() {
			held = append(held, s)
		}
	}
	m.mu.Unlock()
	sort.Slice(held, func(i, j int) bool { return held[i].name < held[j].name })
	for _, s := range held {
		ps, err := m.preserved(s)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s (%v)", s.name, err))
			continue
		}
		s.mu.Lock()
		s.preserved = true
		s.mu.Unlock()
		inv.Seats = append(inv.Seats, ps)
	}
	var wg sync.WaitGroup
	for _, s := range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.stop(ctx, true)
		}()
	}
	wg.Wait()
	m.cut(ctx, &inv)
	inv.Written = time.Now().UTC()
	if err := writeInventory(dir, inv); err != nil {
		return inv, err
	}
	if len(bad) > 0 {
		return inv, fmt.Errorf("%d seat(s) could not be preserved and were stopped for good: %v", len(bad), bad)
	}
	return inv, nil
}

// preserved is a running seat's entry of the inventory; only a seat held
// by a keeper can be restarted as it was (its persona is in its keeper
// directory).
func (m *Manager) preserved(s *Seat) (PreservedSeat, error) {
	s.mu.Lock()
	ps := PreservedSeat{
		Name: s.name, Principal: s.id, UID: s.uid, Role: s.role, Persona: s.persona, Harness: s.harness,
		Cwd: s.cwd, Session: s.agent.session, Creds: s.creds, LaunchDir: s.launchDir, Spawner: s.spawner, Created: s.created,
	}
	dir := s.keepDir
	s.mu.Unlock()
	if dir == "" {
		return ps, errors.New("held by the manager's own process, not a keeper")
	}
	b, err := os.ReadFile(filepath.Join(dir, personaFile))
	if err != nil {
		return ps, fmt.Errorf("its persona: %w", err)
	}
	ps.Agent = b
	rec, _, err := keeper.ReadRecord(dir)
	if err != nil {
		return ps, fmt.Errorf("its keeper's record: %w", err)
	}
	ps.Process, ps.Keeper = rec.Seat, rec.Keeper
	return ps, nil
}

// cut records, once the seats are stopped, where each of their durable
// consumers stands and the last sequence of every stream they read.
func (m *Manager) cut(ctx context.Context, inv *Inventory) {
	js, err := jetstream.New(m.opts.Conn)
	if err != nil {
		m.logf("recording the cut: %v", err)
		return
	}
	space := m.opts.Space
	for _, st := range []string{wire.DMStream(space), wire.DlvStream(space), wire.ChatStream(space), wire.TaskStream(space)} {
		if s, err := js.Stream(ctx, st); err == nil {
			inv.Streams[st] = s.CachedInfo().State.LastSeq
		}
	}
	for i := range inv.Seats {
		ps := &inv.Seats[i]
		for _, c := range []struct{ stream, name string }{
			{wire.DMStream(space), wire.DMConsumer(ps.Principal, ps.UID)},
			{wire.DlvStream(space), wire.DlvConsumer(ps.Principal, ps.UID)},
		} {
			cons, err := js.Consumer(ctx, c.stream, c.name)
			if err != nil {
				continue // an open mesh has none; a space without a backstop has no DLV
			}
			ci := cons.CachedInfo()
			ps.Cut = append(ps.Cut, ConsumerCut{Stream: c.stream, Consumer: c.name,
				Delivered: ci.Delivered.Stream, AckFloor: ci.AckFloor.Stream, AckPending: ci.NumAckPending})
		}
	}
}

// dmResumeFrom is the DM sequence a resumed seat's inbox is made again
// from should its consumer be gone (an open mesh's expire unread): the one
// after what it had acknowledged at the cut, else after the stream's last
// sequence then.
func dmResumeFrom(inv *Inventory, ps PreservedSeat, space string) uint64 {
	for _, c := range ps.Cut {
		if c.Stream == wire.DMStream(space) {
			return c.AckFloor + 1
		}
	}
	if last, ok := inv.Streams[wire.DMStream(space)]; ok {
		return last + 1
	}
	return 0
}

// ControlDir is the part of a run directory no seat sees (every seat's
// sandbox covers it, and it exists before any seat starts): the requests
// of `down --keep-seats` and `--preserve-state`, and the inventory.
func ControlDir(runDir string) string { return filepath.Join(runDir, "control") }

// RemoveInventory removes dir's inventory and its mark, the mark first,
// leaving the directory (a seat's sandbox covers it where it is).
func RemoveInventory(dir string) error {
	for _, f := range []string{readyFile, inventoryFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func writeInventory(dir string, inv Inventory) error {
	if err := privateDir(dir); err != nil {
		return err
	}
	b, err := json.MarshalIndent(inv, "", "  ")
	if err != nil {
		return err
	}
	return writeSynced(filepath.Join(dir, inventoryFile), b)
}

// writeSynced writes path atomically (a synced temp file renamed), 0600,
// and syncs its directory, so the rename itself survives a crash.
func writeSynced(path string, b []byte) error {
	if err := config.WriteFileAtomic(path, b, 0o600); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// MarkReady writes the ready mark of dir's inventory, last, once the stop
// that wrote it is proved.
func MarkReady(dir string, mark ReadyMark) error {
	b, err := os.ReadFile(filepath.Join(dir, inventoryFile))
	if err != nil {
		return err
	}
	mark.Inventory = digest(b)
	out, err := json.MarshalIndent(mark, "", "  ")
	if err != nil {
		return err
	}
	return writeSynced(filepath.Join(dir, readyFile), out)
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ReadInventory reads dir's inventory. ready says its ready mark vouches
// for it; an inventory without one (a stop killed half way) is not to be
// resumed. nil without error when there is none.
func ReadInventory(dir string) (inv *Inventory, ready bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, inventoryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	inv = &Inventory{}
	if err := json.Unmarshal(b, inv); err != nil {
		return nil, false, fmt.Errorf("%s: %w", filepath.Join(dir, inventoryFile), err)
	}
	var mark ReadyMark
	mb, err := os.ReadFile(filepath.Join(dir, readyFile))
	if err == nil && json.Unmarshal(mb, &mark) == nil && mark.Inventory == digest(b) {
		return inv, true, nil
	}
	return inv, false, nil
}

// Lifecycles reports whether the inventory holds a lifecycle.
func (inv *Inventory) Lifecycles() func(wire.Principal, string) bool {
	set := map[string]bool{}
	if inv != nil {
		for _, s := range inv.Seats {
			set[s.Principal.ID()+"/"+s.UID] = true
		}
	}
	return func(p wire.Principal, uid string) bool { return set[p.ID()+"/"+uid] }
}

// Names are the inventory's seats' names.
func (inv *Inventory) Names() []string {
	var out []string
	for _, s := range inv.Seats {
		out = append(out, s.Name)
	}
	return out
}

// resume restarts every seat of the ready inventory the manager was given,
// under its principal and lifecycle uid, its harness resuming its own
// session where it has one. A seat already in custody (a start that
// crashed after restarting it took it back) is not started twice.
func (m *Manager) resume() {
	inv := m.opts.Resume
	if inv == nil || inv.Manager != m.iid {
		return
	}
	now := time.Now()
	for _, ps := range inv.Seats {
		if _, err := os.Stat(keeper.Dir(m.opts.RunDir, ps.Name, ps.UID)); err == nil {
			continue
		}
		m.mu.Lock()
		if old, ok := m.seats[ps.Name]; ok && old.live() {
			m.mu.Unlock()
			m.logf("seat %s of the preserved inventory is not resumed: a seat of that name runs", ps.Name)
			continue
		}
		m.mu.Unlock()
		var a config.AgentFile
		p, err := &Persona{}, json.Unmarshal(ps.Agent, &a)
		if err == nil {
			p, err = personaOf(&a)
		}
		var h harness
		if err == nil {
			h, err = harnessFor(p)
		}
		s := &Seat{
			name: ps.Name, id: ps.Principal, uid: ps.UID, role: ps.Role, persona: ps.Persona, harness: ps.Harness,
			creds: ps.Creds, spawner: ps.Spawner, created: ps.Created, launchDir: ps.LaunchDir, state: StateStarting,
			hello: make(chan struct{}), wake: make(chan struct{}, 1), h: h, returning: true,
			resumedAt: now, resumedFrom: ps.Session, dmFrom: dmResumeFrom(inv, ps, m.opts.Space),
		}
		m.mu.Lock()
		m.seats[s.name] = s
		m.mu.Unlock()
		if err != nil {
			m.retire(s)
			s.mu.Lock()
			s.state, s.exitAt, s.endedHow = StateExited, now, "not resumed"
			s.mu.Unlock()
			m.logf("seat %s cannot be resumed: %v; its lifecycle is ended", s.name, err)
			continue
		}
		m.findTree(s) // its worktree is its own again, as a seat taken back finds it
		pre, post, fresh := resumeArgv(p.Harness, ps.Session)
		if fresh && ps.Session == "" && p.Harness != "command" {
			m.logf("seat %s: its harness said no session id; it starts afresh under the same identity", s.name)
		} else if fresh && p.Harness != "command" {
			m.logf("seat %s: %s cannot resume a session; it starts afresh under the same identity", s.name, p.Harness)
		}
		if fresh {
			s.resumedFrom = ""
		}
		s.argvPre = pre
		args := append(append([]string(nil), p.Args...), post...)
		// Its launch material is written afresh for the new process.
		_ = os.Remove(filepath.Join(ps.LaunchDir, materialFile))
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			proc, err := m.startSeat(m.ctx, s, p, args, ps.Cwd)
			if err != nil {
				m.retire(s)
				s.mu.Lock()
				s.state, s.exitAt = StateExited, time.Now()
				s.mu.Unlock()
				m.logf("seat %s could not be resumed (%v); its lifecycle is ended", s.name, err)
				return
			}
			m.follow(s, p, proc, nil, false)
		}()
	}
}

// resumeArgv is how a harness is restarted on its own session: arguments
// before its launch's and after the persona's. fresh says it starts
// afresh (no session recorded, or a program with no resume of its own).
func resumeArgv(harness, session string) (pre, post []string, fresh bool) {
	if session == "" {
		return nil, nil, true
	}
	switch harness {
	case "claude":
		return nil, []string{"--resume", session}, false
	case "codex":
		return []string{"resume", session}, nil, false
	case "opencode":
		return nil, []string{"--session", session}, false
	}
	return nil, nil, true
}
