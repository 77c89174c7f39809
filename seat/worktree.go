package seat

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/worktree"
)

// seatTree is a seat's git worktree as its manager holds it. Fixed once
// the seat's process starts, but for kept and removed, which the seat's
// end sets under the seat's lock.
type seatTree struct {
	repo    *worktree.Repo
	rec     *worktree.Record
	setup   string // the persona's setup command, run in the seat before its program
	kept    string // why it stayed when the seat ended, "" while it runs or once removed
	removed bool
}

// treeWait bounds the git work of making or ending a seat's worktree.
const treeWait = 2 * time.Minute

// checkTreeArgs refuses a spawn's worktree arguments that cannot go
// together, before anything is started.
func checkTreeArgs(p *Persona, a client.SpawnArgs) *proto.Error {
	tree := a.Worktree || p.Launch.Worktree
	if !tree && (a.Branch != "" || a.Base != "") {
		return proto.Refuse(proto.CodeBadRequest, "a branch or base is for a seat in a worktree: add --worktree")
	}
	if tree && a.Cwd != "" {
		return proto.Refuse(proto.CodeBadRequest, "a seat in a worktree starts in it: leave out the working directory")
	}
	return nil
}

// makeTree creates (or takes back) the seat's worktree when the spawn or
// its persona asks for one, claims it for this seat's lifecycle, copies the
// files the persona's setup lists, and returns the directory the seat
// starts in; "" when it runs without one.
func (m *Manager) makeTree(s *Seat, p *Persona, a client.SpawnArgs) (string, error) {
	if !a.Worktree && !p.Launch.Worktree {
		return "", nil
	}
	if m.opts.ProjectDir == "" {
		return "", fmt.Errorf("this manager has no project directory to make a worktree in")
	}
	ctx, cancel := context.WithTimeout(m.ctx, treeWait)
	defer cancel()
	repo, err := worktree.Open(ctx, m.opts.ProjectDir)
	if err != nil {
		return "", err
	}
	if h := repo.Holder(s.name); h != "" && h != s.uid && m.staleHolder(s, h) {
		m.logf("seat %s: its worktree was held by lifecycle %s, whose credential is revoked: taken over", s.name, h)
		_ = repo.Release(s.name, h)
	}
	rec, err := repo.Create(ctx, worktree.Options{Seat: s.name, Branch: a.Branch, Base: a.Base, Owner: s.uid})
	if err != nil {
		return "", err
	}
	if len(p.Launch.Setup.Copy) > 0 {
		if err := repo.Copy(s.name, p.Launch.Setup.Copy); err != nil {
			_ = repo.Release(s.name, s.uid)
			return "", err
		}
	}
	s.mu.Lock()
	s.tree = &seatTree{repo: repo, rec: rec, setup: p.Launch.Setup.Run}
	s.mu.Unlock()
	m.logf("seat %s runs in worktree %s on branch %s", s.name, rec.Path, rec.Branch)
	return repo.Cwd(rec), nil
}

// staleHolder reports whether the lifecycle holding a worktree is over: no
// seat here runs as it, and its credential (of the same name) is revoked.
// Without a minter that can tell, a holder is never taken to be stale.
func (m *Manager) staleHolder(s *Seat, uid string) bool {
	kb, ok := m.opts.Minter.(KeptBy)
	if !ok {
		return false
	}
	m.mu.Lock()
	for _, other := range m.seats {
		if other.uid == uid && other.live() {
			m.mu.Unlock()
			return false
		}
	}
	m.mu.Unlock()
	return !kb.Holds(s.id, uid)
}

// findTree gives a seat taken back from its keeper the worktree its
// lifecycle claims, if any.
func (m *Manager) findTree(s *Seat) {
	if m.opts.ProjectDir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, treeWait)
	defer cancel()
	repo, err := worktree.Open(ctx, m.opts.ProjectDir)
	if err != nil || repo.Holder(s.name) != s.uid {
		return
	}
	if rec, err := repo.Get(s.name); err == nil {
		s.mu.Lock()
		s.tree = &seatTree{repo: repo, rec: rec}
		s.mu.Unlock()
	}
}

// endTree lets go of an ended seat's worktree: removed when nothing in it
// would be lost, kept (and ps says why) when it has uncommitted changes or
// commits its base lacks. A seat preserved for a resume keeps it as it is.
func (m *Manager) endTree(s *Seat) {
	s.mu.Lock()
	t, preserved := s.tree, s.preserved
	s.mu.Unlock()
	if t == nil || preserved {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), treeWait)
	defer cancel()
	if err := t.repo.Release(s.name, s.uid); err != nil {
		m.logf("seat %s: letting go of its worktree: %v", s.name, err)
	}
	st, err := t.repo.Status(ctx, s.name)
	if err != nil {
		m.logf("seat %s: its worktree %s is kept: reading its status: %v", s.name, t.rec.Path, err)
		return
	}
	kept, removed := "", false
	switch st.State {
	case worktree.Clean, worktree.Missing:
		if _, err := t.repo.Remove(ctx, s.name, false); err != nil {
			m.logf("seat %s: removing its clean worktree: %v", s.name, err)
			kept = st.State
		} else {
			removed = true
		}
	default:
		kept = st.State
		m.logf("seat %s ended with %s work in its worktree %s (branch %s): kept; see cotal diff %s", s.name, st.State, st.Path, st.Branch, s.name)
	}
	s.mu.Lock()
	t.kept, t.removed = kept, removed
	s.mu.Unlock()
}

// treeRow is the seat's worktree for its ps row; the caller holds s.mu.
func (s *Seat) treeRow() *client.WorktreeRow {
	t := s.tree
	if t == nil {
		return nil
	}
	return &client.WorktreeRow{Path: t.rec.Path, Branch: t.rec.Branch, Base: t.rec.Base, Kept: t.kept, Removed: t.removed}
}

// setupArgs wraps a seat's program in the persona's setup command when its
// worktree has one: sh runs it in the seat (its sandbox, its environment,
// so the setup has no right the seat lacks) and then becomes the program.
func (s *Seat) setupArgs(path string, args []string) (string, []string) {
	s.mu.Lock()
	t := s.tree
	s.mu.Unlock()
	if t == nil || t.setup == "" {
		return path, args
	}
	if abs, err := exec.LookPath(path); err == nil {
		path = abs // the program the manager found, whatever PATH the setup leaves
	}
	script := "(" + t.setup + ") || { echo \"cotal: the persona's setup command failed (exit $?)\" >&2; exit 1; }\nexec \"$0\" \"$@\""
	return "sh", append([]string{"-c", script, path}, args...)
}
