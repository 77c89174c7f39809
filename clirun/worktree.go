package clirun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/worktree"
)

// inRepo runs fn on the git repository of the project holding the
// working directory, with a bound on its git work; no project here is bad
// input. A worktree refusal fn returns gets its exit code (treeError).
func inRepo[T any](ctx context.Context, fn func(context.Context, *worktree.Repo) (T, error)) (v T, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cwd, err := os.Getwd()
	if err != nil {
		return v, err
	}
	dir := config.ProjectDir(cwd)
	if dir == "" {
		return v, usagef("no project here: no .cotal directory in %s or above (cotal init makes one)", cwd)
	}
	r, err := worktree.Open(ctx, dir)
	if err != nil {
		return v, err
	}
	v, err = fn(ctx, r)
	return v, treeError(err)
}

// treeError gives a worktree refusal its exit code: a bad name, a missing
// worktree or no editor is the person's input (2), the rest a failure (1).
func treeError(err error) error {
	for _, e := range []error{worktree.ErrBadName, worktree.ErrNoWorktree, worktree.ErrNoEditor} {
		if errors.Is(err, e) {
			return bad(err)
		}
	}
	return err
}

// Worktrees are the seats' worktrees and what is in them, and the folder
// that holds them.
func Worktrees(ctx context.Context) (list []*worktree.Status, dir string, err error) {
	list, err = inRepo(ctx, func(ctx context.Context, r *worktree.Repo) ([]*worktree.Status, error) {
		dir = r.Dir()
		return r.List(ctx)
	})
	return list, dir, err
}

// RemoveWorktree removes a seat's worktree; its branch stays if it has
// commits. force removes uncommitted changes, and one a seat holds.
func RemoveWorktree(ctx context.Context, seat string, force bool) (*worktree.Removed, error) {
	return inRepo(ctx, func(ctx context.Context, r *worktree.Repo) (*worktree.Removed, error) {
		return r.Remove(ctx, seat, force)
	})
}

// PruneWorktrees removes every worktree no seat holds that has nothing to
// lose, and says which, also when one failed.
func PruneWorktrees(ctx context.Context) ([]*worktree.Removed, error) {
	return inRepo(ctx, func(ctx context.Context, r *worktree.Repo) ([]*worktree.Removed, error) { return r.Prune(ctx) })
}

// Diff is what a seat changed in its worktree since its branch left its
// base.
func Diff(ctx context.Context, seat string) (*worktree.Diff, error) {
	return inRepo(ctx, func(ctx context.Context, r *worktree.Repo) (*worktree.Diff, error) { return r.Diff(ctx, seat) })
}

// Merge merges a seat's branch into its base in the main checkout, or
// rebases it there and fast-forwards; a merge that would conflict is a
// *worktree.ConflictError, and nothing changed.
func Merge(ctx context.Context, seat string, rebase bool) (*worktree.Merged, error) {
	return inRepo(ctx, func(ctx context.Context, r *worktree.Repo) (*worktree.Merged, error) {
		return r.Merge(ctx, seat, rebase)
	})
}

// Review is a review of a seat's diff under way: the person's editor to
// run on the review file, then Send once it exited.
type Review struct {
	Editor *exec.Cmd
	c      Caller
	rv     *worktree.Review
}

// StartReview writes the seat's diff into a review file and finds the
// editor to write the comments in.
func StartReview(ctx context.Context, c Caller, seat string) (*Review, error) {
	rv, err := inRepo(ctx, func(ctx context.Context, r *worktree.Repo) (*worktree.Review, error) { return r.StartReview(ctx, seat) })
	if err != nil {
		return nil, err
	}
	editor, err := rv.Editor(os.Getenv)
	if err != nil {
		rv.Close()
		return nil, treeError(err)
	}
	return &Review{Editor: editor, c: c, rv: rv}, nil
}

// Send reads the comments once the editor exited (edited is how it did)
// and sends them to the seat as one DM, then removes the review file.
// No comment sends nothing, and the receipt is nil.
func (r *Review) Send(edited error) ([]worktree.Comment, *mesh.Receipt, error) {
	defer r.rv.Close()
	if edited != nil {
		return nil, nil, fmt.Errorf("the editor failed: %w; nothing was sent", edited)
	}
	comments, err := r.rv.Comments()
	if err != nil || len(comments) == 0 {
		return comments, nil, err
	}
	var rc mesh.Receipt
	err = r.c.OneShot(mesh.Options{Subscribe: []string{}}, func(ctx context.Context, e *mesh.Endpoint) (err error) {
		rc, err = e.DM(ctx, r.rv.Seat, r.rv.Message(comments))
		return SendError(err)
	})
	if err != nil {
		return nil, nil, err
	}
	return comments, &rc, nil
}
