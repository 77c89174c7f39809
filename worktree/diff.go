package worktree

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FileStat is one file a diff changes.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}

// Diff is a seat's work against its base: committed, staged, unstaged and
// untracked alike.
type Diff struct {
	Seat    string     `json:"seat"`
	Branch  string     `json:"branch"`
	Base    string     `json:"base"`  // the branch (or commit) it is measured against
	From    string     `json:"from"`  // the commit the diff starts at: where the branch left its base
	Files   []FileStat `json:"files"` // by path
	Patch   string     `json:"patch"` // unified diff, no colour
	Added   int        `json:"added"` // lines, over every file
	Deleted int        `json:"deleted"`
}

// Diff is the seat's changes since its branch left its base, with the
// worktree's files as they are now. The worktree's own index is not
// touched: the tree is read into a copy of it.
func (r *Repo) Diff(ctx context.Context, seat string) (*Diff, error) {
	st, err := r.Status(ctx, seat)
	if err != nil {
		return nil, err
	}
	if st.State == Missing {
		return nil, fmt.Errorf("%w: the worktree of seat %s is gone from %s (cotal worktree prune forgets it)", ErrNoWorktree, seat, st.Path)
	}
	target := r.target(ctx, &st.Record)
	out, err := git(ctx, st.Path, "merge-base", target, "HEAD")
	if err != nil {
		return nil, fmt.Errorf("finding where %s left its base: %w", st.Branch, err)
	}
	from := strings.TrimSpace(out)
	env, done, err := r.snapshot(ctx, &st.Record)
	if err != nil {
		return nil, err
	}
	defer done()
	args := []string{"diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames"}
	num, err := run(ctx, st.Path, env, append(args, "--numstat", "-z", from, "--")...)
	if err != nil {
		return nil, err
	}
	patch, err := run(ctx, st.Path, env, append(args, from, "--")...)
	if err != nil {
		return nil, err
	}
	d := &Diff{Seat: seat, Branch: st.Branch, Base: strings.TrimPrefix(target, "refs/heads/"), From: from, Patch: patch}
	for _, rec := range strings.Split(num, "\x00") {
		f := strings.SplitN(rec, "\t", 3)
		if len(f) != 3 {
			continue
		}
		fs := FileStat{Path: f[2]}
		if f[0] == "-" {
			fs.Binary = true
		} else {
			fs.Added, _ = strconv.Atoi(f[0])
			fs.Deleted, _ = strconv.Atoi(f[1])
		}
		d.Added += fs.Added
		d.Deleted += fs.Deleted
		d.Files = append(d.Files, fs)
	}
	return d, nil
}

// snapshot stages everything in the worktree (untracked files included,
// setup's copies left out) into a temporary copy of its index, and returns
// the environment that points git at it.
func (r *Repo) snapshot(ctx context.Context, rec *Record) ([]string, func(), error) {
	tmp, err := os.MkdirTemp("", "cotal-diff-")
	if err != nil {
		return nil, nil, err
	}
	done := func() { _ = os.RemoveAll(tmp) }
	index := filepath.Join(tmp, "index")
	env := gitEnv("GIT_INDEX_FILE=" + index)
	real, err := git(ctx, rec.Path, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err == nil {
		err = copyFile(strings.TrimSpace(real), index)
	}
	if err != nil {
		if _, err := run(ctx, rec.Path, env, "read-tree", "HEAD"); err != nil {
			done()
			return nil, nil, err
		}
	}
	add := []string{"add", "-A", "--", ":/"}
	for _, c := range rec.Copied {
		add = append(add, ":(top,exclude)"+filepath.ToSlash(filepath.Join(r.rel, c)))
	}
	if _, err := run(ctx, rec.Path, env, add...); err != nil {
		done()
		return nil, nil, err
	}
	return env, done, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
