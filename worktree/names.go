package worktree

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrBadName is returned for a seat, branch, base or file name that is
// refused before git sees it.
var ErrBadName = errors.New("refused name")

// maxSeatLength bounds a seat name, as the mesh bounds a token.
const maxSeatLength = 128

// CheckSeat refuses a seat name that is not one token of A-Z a-z 0-9 _,
// which is all a seat may be named and keeps its worktree's path one
// directory under .cotal/worktrees.
func CheckSeat(seat string) error {
	if seat == "" || len(seat) > maxSeatLength {
		return fmt.Errorf("%w: seat %q: a seat is named by 1 to %d characters of A-Z a-z 0-9 _", ErrBadName, seat, maxSeatLength)
	}
	for i := 0; i < len(seat); i++ {
		c := seat[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return fmt.Errorf("%w: seat %q: a seat is named by A-Z a-z 0-9 _ only", ErrBadName, seat)
		}
	}
	return nil
}

// CheckBranch refuses a branch name git would not take as a branch, or that
// could be read as an option.
func (r *Repo) CheckBranch(ctx context.Context, branch string) error {
	if branch == "" || strings.HasPrefix(branch, "-") || strings.HasPrefix(branch, "refs/") || branch == "HEAD" {
		return fmt.Errorf("%w: branch %q: name a branch as git does (cotal/x, feature-1), not starting with - or refs/", ErrBadName, branch)
	}
	if _, err := git(ctx, r.Root, "check-ref-format", "refs/heads/"+branch); err != nil {
		return fmt.Errorf("%w: branch %q is not a valid git branch name (git check-ref-format)", ErrBadName, branch)
	}
	return nil
}

// resolve turns a ref a person wrote (a branch, tag, commit, HEAD~2) into a
// commit id, never letting it be read as an option.
func (r *Repo) resolve(ctx context.Context, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, "\x00\n") {
		return "", fmt.Errorf("%w: base %q: name a branch, tag or commit, not starting with -", ErrBadName, ref)
	}
	out, err := git(ctx, r.Root, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%w: base %q names no commit in %s", ErrBadName, ref, r.Root)
	}
	return strings.TrimSpace(out), nil
}

// branchExists reports whether refs/heads/<branch> exists.
func (r *Repo) branchExists(ctx context.Context, branch string) bool {
	_, err := git(ctx, r.Root, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// checkRel refuses a file name a setup lists that is not a plain path
// inside the checkout.
func checkRel(name string) (string, error) {
	c := filepath.Clean(name)
	if name == "" || filepath.IsAbs(name) || c == "." || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("%w: setup file %q: list files by their path inside the checkout (.env, config/local.json)", ErrBadName, name)
	}
	if first, _, _ := strings.Cut(c, "/"); first == ".git" || first == ".cotal" {
		return "", fmt.Errorf("%w: setup file %q: files under %s are not copied", ErrBadName, name, first)
	}
	return c, nil
}
