package worktree

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrConflict is returned (as a *ConflictError) when a merge or rebase
	// would conflict; nothing was changed.
	ErrConflict = errors.New("conflict")
	// ErrMainDirty is returned when the main checkout has changes a merge
	// could mix with the seat's.
	ErrMainDirty = errors.New("main checkout not clean")
	// ErrNothing is returned when the seat's branch has no commit its base
	// lacks.
	ErrNothing = errors.New("nothing to merge")
)

// ConflictError names the files a merge of a seat's branch would conflict on.
type ConflictError struct {
	Seat, Branch, Base string
	Files              []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("merging %s into %s would conflict in %s: nothing was changed; resolve it on the seat's branch (merge %s there) and try again",
		e.Branch, e.Base, strings.Join(e.Files, ", "), e.Base)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// Merged says what a merge did.
type Merged struct {
	Seat    string `json:"seat"`
	Branch  string `json:"branch"`
	Base    string `json:"base"`
	Commits int    `json:"commits"` // commits of the seat's brought in
	Head    string `json:"head"`    // the base's commit after it
	Rebased bool   `json:"rebased"`
}

// Merge brings the seat's committed work into its base branch, checked
// out in the main checkout: a merge commit, or with rebase the seat's
// branch rebased onto the base (in its worktree) and the base fast-forwarded.
// It refuses a main checkout with changes or on another branch, a worktree
// with uncommitted changes, and any conflict (checked with merge-tree before
// anything changes); a step that fails anyway is aborted, so the main
// checkout is never left half merged.
func (r *Repo) Merge(ctx context.Context, seat string, rebase bool) (*Merged, error) {
	st, err := r.Status(ctx, seat)
	if err != nil {
		return nil, err
	}
	if st.State == Missing {
		return nil, fmt.Errorf("%w: the worktree of seat %s is gone from %s", ErrNoWorktree, seat, st.Path)
	}
	if len(st.Uncommitted) > 0 {
		return nil, fmt.Errorf("%w in the worktree of seat %s (%s): only commits are merged; have the seat commit them, or commit them in %s", ErrUncommitted, seat, strings.Join(st.Uncommitted, ", "), st.Path)
	}
	if st.Ahead == 0 {
		return nil, fmt.Errorf("%w: branch %s has no commit its base lacks", ErrNothing, st.Branch)
	}
	cur, err := git(ctx, r.Root, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("the main checkout %s is on no branch: check out the branch to merge into", r.Root)
	}
	base := strings.TrimSpace(cur)
	if st.Base != "" && st.Base != base {
		return nil, fmt.Errorf("the main checkout is on %s, and seat %s's work goes into %s: git switch %s there first", base, seat, st.Base, st.Base)
	}
	dirty, err := git(ctx, r.Root, "status", "--porcelain=v1", "--untracked-files=no")
	if err != nil {
		return nil, err
	}
	if d := lines(dirty); len(d) > 0 {
		return nil, fmt.Errorf("%w: %s has changes (%s): commit or stash them first", ErrMainDirty, r.Root, strings.Join(d, "; "))
	}
	if files, err := r.conflicts(ctx, base, st.Branch); err != nil {
		return nil, err
	} else if len(files) > 0 {
		return nil, &ConflictError{Seat: seat, Branch: st.Branch, Base: base, Files: files}
	}
	res := &Merged{Seat: seat, Branch: st.Branch, Base: base, Commits: st.Ahead, Rebased: rebase}
	if rebase {
		if _, err := git(ctx, st.Path, "rebase", "refs/heads/"+base); err != nil {
			_, _ = git(ctx, st.Path, "rebase", "--abort")
			return nil, fmt.Errorf("rebasing %s onto %s failed and was undone: %w", st.Branch, base, err)
		}
		if _, err := git(ctx, r.Root, "merge", "--ff-only", "refs/heads/"+st.Branch); err != nil {
			return nil, fmt.Errorf("fast-forwarding %s to the rebased %s: %w", base, st.Branch, err)
		}
	} else {
		msg := fmt.Sprintf("Merge seat %s's branch %s", seat, st.Branch)
		if _, err := git(ctx, r.Root, "merge", "--no-ff", "--no-edit", "-m", msg, "refs/heads/"+st.Branch); err != nil {
			_, _ = git(ctx, r.Root, "merge", "--abort")
			return nil, fmt.Errorf("merging %s failed and was undone: %w", st.Branch, err)
		}
	}
	head, err := git(ctx, r.Root, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	res.Head = strings.TrimSpace(head)
	return res, nil
}

// conflicts are the files merging branch into base would conflict on,
// found without touching any checkout.
func (r *Repo) conflicts(ctx context.Context, base, branch string) ([]string, error) {
	out, err := git(ctx, r.Root, "merge-tree", "--write-tree", "--name-only", "--no-messages", "refs/heads/"+base, "refs/heads/"+branch)
	if err == nil {
		return nil, nil
	}
	if exitCode(err) != 1 {
		return nil, fmt.Errorf("checking the merge for conflicts (git 2.38 or later is needed): %w", err)
	}
	ls := lines(out)
	if len(ls) < 2 {
		return []string{"(git named no file)"}, nil
	}
	return ls[1:], nil
}
