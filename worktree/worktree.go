package worktree

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Sentinel errors, each returned wrapped with what to do.
var (
	// ErrNotRepo is returned when the project is not in a git repository.
	ErrNotRepo = errors.New("not a git repository")
	// ErrInUse is returned when a worktree, or its branch, is held by
	// another seat or checkout.
	ErrInUse = errors.New("worktree in use")
	// ErrExists is returned when the default branch for a seat exists and
	// nobody asked to reuse it.
	ErrExists = errors.New("branch exists")
	// ErrNoWorktree is returned when a seat has no worktree.
	ErrNoWorktree = errors.New("no worktree")
	// ErrUncommitted is returned by a remove or merge of a worktree with
	// uncommitted changes.
	ErrUncommitted = errors.New("uncommitted changes")
)

// Repo is a project in a git repository: the main checkout and the
// project's directory in it, under which worktrees live.
type Repo struct {
	Root    string // the main checkout's top level
	Project string // the project directory (holding .cotal), inside Root
	rel     string // Project relative to Root, "." at the top
}

// Open finds the git repository holding the project directory. Run from a
// linked worktree it still names the main checkout.
func Open(ctx context.Context, projectDir string) (*Repo, error) {
	proj, err := filepath.Abs(projectDir)
	if err == nil {
		proj, err = filepath.EvalSymlinks(proj)
	}
	if err != nil {
		return nil, fmt.Errorf("project directory %s: %w", projectDir, err)
	}
	top, err := git(ctx, proj, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%w: %s (worktrees need the project in a git repository: run git init there)", ErrNotRepo, proj)
	}
	root := strings.TrimSpace(top)
	common, err := git(ctx, proj, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err == nil {
		if c := strings.TrimSpace(common); filepath.Base(c) == ".git" {
			root = filepath.Dir(c)
		}
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(strings.TrimSpace(top), proj)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	return &Repo{Root: root, Project: filepath.Join(root, rel), rel: rel}, nil
}

// Dir is where the project's worktrees live.
func (r *Repo) Dir() string { return filepath.Join(r.Project, ".cotal", "worktrees") }

func (r *Repo) path(seat string) string { return filepath.Join(r.Dir(), seat) }
func (r *Repo) recordPath(seat string) string {
	return filepath.Join(r.Dir(), ".records", seat+".json")
}
func (r *Repo) lockPath(seat string) string { return filepath.Join(r.Dir(), ".locks", seat) }

// Record is what cotal keeps of a worktree it made.
type Record struct {
	Seat       string    `json:"seat"`
	Path       string    `json:"path"`             // the worktree's top level
	Branch     string    `json:"branch"`           // its branch, short name
	Base       string    `json:"base,omitempty"`   // the branch it merges into; "" when made from a commit
	BaseCommit string    `json:"baseCommit"`       // the commit it was made from
	NewBranch  bool      `json:"newBranch"`        // cotal created the branch (deleted with a worktree that added nothing)
	Copied     []string  `json:"copied,omitempty"` // files setup copied from the main checkout
	Created    time.Time `json:"created"`
}

// Cwd is where a seat of this worktree starts: the project's directory in it.
func (r *Repo) Cwd(rec *Record) string { return filepath.Join(rec.Path, r.rel) }

// Options say how a seat's worktree is made.
type Options struct {
	Seat   string
	Branch string // default cotal/<seat>; an existing branch named here is checked out
	Base   string // the ref it starts from; default HEAD
	Owner  string // who claims it (a seat's lifecycle), written in its lock
}

// Create makes the seat's worktree, or takes back the one a stopped seat
// of the same name kept, and claims it for opts.Owner. A worktree another
// owner holds, or a branch checked out elsewhere, is refused with ErrInUse.
func (r *Repo) Create(ctx context.Context, opts Options) (*Record, error) {
	if err := CheckSeat(opts.Seat); err != nil {
		return nil, err
	}
	branch, named := opts.Branch, opts.Branch != ""
	if !named {
		branch = "cotal/" + opts.Seat
	}
	if err := r.CheckBranch(ctx, branch); err != nil {
		return nil, err
	}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	if err := r.claim(opts.Seat, opts.Owner); err != nil {
		return nil, err
	}
	rec, err := r.create(ctx, opts, branch, named)
	if err != nil {
		_ = r.Release(opts.Seat, opts.Owner)
		return nil, err
	}
	return rec, nil
}

func (r *Repo) create(ctx context.Context, opts Options, branch string, named bool) (*Record, error) {
	if rec, err := r.Get(opts.Seat); err == nil {
		if named && rec.Branch != branch {
			return nil, fmt.Errorf("%w: seat %s kept a worktree on branch %s, not %s: merge or remove it first (cotal worktree rm %s)", ErrInUse, opts.Seat, rec.Branch, branch, opts.Seat)
		}
		if _, err := os.Stat(rec.Path); err == nil {
			return rec, nil // a kept worktree, taken back
		}
		_ = os.Remove(r.recordPath(opts.Seat))
	}
	if _, err := os.Lstat(r.path(opts.Seat)); err == nil {
		return nil, fmt.Errorf("%w: %s exists and cotal has no record of it: move it away", ErrInUse, r.path(opts.Seat))
	}
	base := opts.Base
	if base == "" {
		base = "HEAD"
	}
	commit, err := r.resolve(ctx, base)
	if err != nil {
		return nil, err
	}
	rec := &Record{Seat: opts.Seat, Path: r.path(opts.Seat), Branch: branch, BaseCommit: commit, Created: time.Now().UTC()}
	rec.Base = r.baseBranch(ctx, base)
	args := []string{"worktree", "add"}
	if r.branchExists(ctx, branch) {
		if !named {
			return nil, fmt.Errorf("%w: branch %s is left from an earlier seat: reuse it by naming it (--branch %s), or delete it (git branch -D %s)", ErrExists, branch, branch, branch)
		}
		args = append(args, "--", rec.Path, branch)
	} else {
		rec.NewBranch = true
		args = append(args, "-b", branch, "--", rec.Path, commit)
	}
	if _, err := git(ctx, r.Root, args...); err != nil {
		if strings.Contains(err.Error(), "already checked out") || strings.Contains(err.Error(), "is already used by worktree") {
			return nil, fmt.Errorf("%w: branch %s is checked out in another worktree: %v", ErrInUse, branch, err)
		}
		return nil, fmt.Errorf("creating the worktree: %w", err)
	}
	if err := r.write(rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// baseBranch is the branch a base names, "" when it names a commit: HEAD is
// the main checkout's branch.
func (r *Repo) baseBranch(ctx context.Context, base string) string {
	if base == "HEAD" {
		out, err := git(ctx, r.Root, "symbolic-ref", "--quiet", "--short", "HEAD")
		if err != nil {
			return ""
		}
		return strings.TrimSpace(out)
	}
	b := strings.TrimPrefix(base, "refs/heads/")
	if r.CheckBranch(ctx, b) == nil && r.branchExists(ctx, b) {
		return b
	}
	return ""
}

// prepare makes .cotal/worktrees with its bookkeeping directories, and a
// .gitignore that keeps all of it out of the main checkout's status.
func (r *Repo) prepare() error {
	for _, d := range []string{r.Dir(), filepath.Join(r.Dir(), ".records"), filepath.Join(r.Dir(), ".locks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	ign := filepath.Join(r.Dir(), ".gitignore")
	if _, err := os.Stat(ign); err == nil {
		return nil
	}
	return os.WriteFile(ign, []byte("# cotal's seat worktrees: never part of the project\n*\n"), 0o644)
}

func (r *Repo) write(rec *Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.recordPath(rec.Seat) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.recordPath(rec.Seat))
}

// Get reads the record of a seat's worktree (ErrNoWorktree when none).
func (r *Repo) Get(seat string) (*Record, error) {
	if err := CheckSeat(seat); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(r.recordPath(seat))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w for seat %s (cotal worktree ls lists them)", ErrNoWorktree, seat)
	}
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("reading %s: %w", r.recordPath(seat), err)
	}
	if rec.Seat != seat || rec.Path != r.path(seat) {
		return nil, fmt.Errorf("%s names seat %q at %s, not this seat's worktree: remove it", r.recordPath(seat), rec.Seat, rec.Path)
	}
	return &rec, nil
}

// Records are every worktree cotal made here, by seat.
func (r *Repo) Records() ([]*Record, error) {
	ents, err := os.ReadDir(filepath.Join(r.Dir(), ".records"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Record
	for _, e := range ents {
		seat, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || CheckSeat(seat) != nil {
			continue
		}
		if rec, err := r.Get(seat); err == nil {
			out = append(out, rec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seat < out[j].Seat })
	return out, nil
}

// claim holds the seat's worktree for owner; a second claim by another
// owner is refused until the first is released.
func (r *Repo) claim(seat, owner string) error {
	if owner == "" {
		owner = "unnamed"
	}
	f, err := os.OpenFile(r.lockPath(seat), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		held := r.Holder(seat)
		if held == owner {
			return nil
		}
		return fmt.Errorf("%w: the worktree of seat %s is held by %s: stop that seat first", ErrInUse, seat, held)
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(owner)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Holder is who claims the seat's worktree, "" when no one does.
func (r *Repo) Holder(seat string) string {
	if CheckSeat(seat) != nil {
		return ""
	}
	b, err := os.ReadFile(r.lockPath(seat))
	if err != nil {
		return ""
	}
	if len(b) == 0 {
		return "unnamed"
	}
	return string(b)
}

// Release lets go of the seat's worktree if owner holds it.
func (r *Repo) Release(seat, owner string) error {
	if err := CheckSeat(seat); err != nil {
		return err
	}
	if owner == "" {
		owner = "unnamed"
	}
	if h := r.Holder(seat); h != owner {
		return nil
	}
	err := os.Remove(r.lockPath(seat))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
