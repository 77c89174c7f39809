package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNoEditor is returned by Review.Editor when neither $VISUAL nor
// $EDITOR names a program.
var ErrNoEditor = errors.New("no editor: set $EDITOR (or $VISUAL) to the program to write the review in")

// Review is one review of a seat's diff: the private file a person writes
// comments in, removed by Close.
type Review struct {
	Seat string
	Diff *Diff
	Path string
}

// StartReview writes the seat's diff into a private review file; a seat
// with no changes has nothing to review.
func (r *Repo) StartReview(ctx context.Context, seat string) (*Review, error) {
	d, err := r.Diff(ctx, seat)
	if err != nil {
		return nil, err
	}
	if len(d.Files) == 0 {
		return nil, fmt.Errorf("%s has no changes against %s: nothing to review", seat, d.Base)
	}
	f, err := os.CreateTemp("", "cotal-review-*.diff")
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(ReviewFile(d))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return nil, err
	}
	return &Review{Seat: seat, Diff: d, Path: f.Name()}, nil
}

// Close removes the review file.
func (rv *Review) Close() { _ = os.Remove(rv.Path) }

// Editor is the person's $VISUAL or $EDITOR (as getenv reads them) on the
// review file. The editor may be a command with arguments (code -w): the
// shell splits it, and the file goes as its own argument.
func (rv *Review) Editor(getenv func(string) string) (*exec.Cmd, error) {
	editor := getenv("VISUAL")
	if editor == "" {
		editor = getenv("EDITOR")
	}
	if strings.TrimSpace(editor) == "" {
		return nil, ErrNoEditor
	}
	return exec.Command("sh", "-c", editor+` "$1"`, "sh", rv.Path), nil
}

// Comments reads the comments written in the review file; none is an
// empty list, not nil.
func (rv *Review) Comments() ([]Comment, error) {
	b, err := os.ReadFile(rv.Path)
	if err != nil {
		return nil, err
	}
	if c := ParseReview(string(b)); c != nil {
		return c, nil
	}
	return []Comment{}, nil
}

// Message is the one message a review's comments become: each comment
// under the file, line and code it is about.
func (rv *Review) Message(comments []Comment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Review of your work on branch %s (against %s): %d comment(s).\n", rv.Diff.Branch, rv.Diff.Base, len(comments))
	for _, c := range comments {
		b.WriteString("\n")
		switch {
		case c.Removed:
			fmt.Fprintf(&b, "%s, removed line %d of the base: %s\n", c.Path, c.OldLine, strings.TrimSpace(c.Code))
		case c.Line == 0:
			fmt.Fprintf(&b, "%s (the whole file)\n", c.Path)
		default:
			fmt.Fprintf(&b, "%s:%d: %s\n", c.Path, c.Line, strings.TrimSpace(c.Code))
		}
		for _, l := range strings.Split(c.Text, "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
