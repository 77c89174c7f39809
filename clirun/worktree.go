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

// InRepo runs fn on the git repository of the project holding the working
// directory, with a bound on its git work; no project here is bad input.
// A worktree refusal fn returns gets its exit code (TreeError).
func InRepo(ctx context.Context, fn func(context.Context, *worktree.Repo) error) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	dir := config.ProjectDir(cwd)
	if dir == "" {
		return usagef("no project here: no .cotal directory in %s or above (cotal init makes one)", cwd)
	}
	r, err := worktree.Open(ctx, dir)
	if err != nil {
		return err
	}
	return TreeError(fn(ctx, r))
}

// TreeError gives a worktree refusal its exit code: a bad name, a missing
// worktree or no editor is the person's input (2), the rest a failure (1).
func TreeError(err error) error {
	for _, e := range []error{worktree.ErrBadName, worktree.ErrNoWorktree, worktree.ErrNoEditor} {
		if errors.Is(err, e) {
			return bad(err)
		}
	}
	return err
}

// Diff is what a seat changed in its worktree since its branch left its
// base.
func Diff(ctx context.Context, seat string) (d *worktree.Diff, err error) {
	err = InRepo(ctx, func(ctx context.Context, r *worktree.Repo) (err error) {
		d, err = r.Diff(ctx, seat)
		return err
	})
	return d, err
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
	var rv *worktree.Review
	err := InRepo(ctx, func(ctx context.Context, r *worktree.Repo) (err error) {
		rv, err = r.StartReview(ctx, seat)
		return err
	})
	if err != nil {
		return nil, err
	}
	editor, err := rv.Editor(os.Getenv)
	if err != nil {
		rv.Close()
		return nil, TreeError(err)
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
