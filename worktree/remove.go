package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Removed says what a remove did.
type Removed struct {
	Seat         string `json:"seat"`
	Path         string `json:"path"`
	Branch       string `json:"branch"`
	BranchKept   bool   `json:"branchKept"`   // the branch stays: it has commits its base lacks, or was not cotal's
	Discarded    bool   `json:"discarded"`    // uncommitted changes were thrown away (force)
	AheadCommits int    `json:"aheadCommits"` // commits on the kept branch its base lacks
}

// Remove deletes the seat's worktree. Without force it refuses one a seat
// holds (ErrInUse) or one with uncommitted changes (ErrUncommitted). Its
// branch is deleted only when cotal made it and it holds no commit its base
// lacks, so no commit is ever lost.
func (r *Repo) Remove(ctx context.Context, seat string, force bool) (*Removed, error) {
	st, err := r.Status(ctx, seat)
	if err != nil {
		return nil, err
	}
	if st.Holder != "" && !force {
		return nil, fmt.Errorf("%w: the worktree of seat %s is held by %s: stop the seat first, or pass --force", ErrInUse, seat, st.Holder)
	}
	if len(st.Uncommitted) > 0 && !force {
		return nil, fmt.Errorf("%w in the worktree of seat %s (%s): commit them there, merge, or pass --force to throw them away", ErrUncommitted, seat, strings.Join(st.Uncommitted, ", "))
	}
	res := &Removed{Seat: seat, Path: st.Path, Branch: st.Branch, Discarded: len(st.Uncommitted) > 0, AheadCommits: st.Ahead}
	if st.State != Missing {
		for _, c := range st.Copied {
			_ = os.Remove(filepath.Join(r.Cwd(&st.Record), c))
		}
		if _, err := git(ctx, r.Root, "worktree", "remove", "--force", "--", st.Path); err != nil {
			return nil, fmt.Errorf("removing the worktree: %w", err)
		}
	} else if _, err := git(ctx, r.Root, "worktree", "prune"); err != nil {
		return nil, err
	}
	res.BranchKept = !st.NewBranch || st.Ahead > 0
	if !res.BranchKept && r.branchExists(ctx, st.Branch) {
		if _, err := git(ctx, r.Root, "branch", "-D", "--", st.Branch); err != nil {
			return nil, fmt.Errorf("deleting branch %s: %w", st.Branch, err)
		}
	}
	for _, p := range []string{r.recordPath(seat), r.lockPath(seat)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return res, nil
}

// Prune removes every worktree no seat holds and that holds nothing to
// lose (clean or missing), and has git forget worktrees whose directory is
// gone.
func (r *Repo) Prune(ctx context.Context) ([]*Removed, error) {
	if _, err := git(ctx, r.Root, "worktree", "prune"); err != nil {
		return nil, err
	}
	list, err := r.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Removed
	for _, st := range list {
		if st.Holder != "" || (st.State != Clean && st.State != Missing) {
			continue
		}
		rm, err := r.Remove(ctx, st.Seat, false)
		if err != nil {
			return out, err
		}
		out = append(out, rm)
	}
	return out, nil
}
