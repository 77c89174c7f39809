package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/tui"
	"github.com/cotal-go/cotal/worktree"
)

func newReviewCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "review <seat>",
		Short: "Comment on a seat's diff in $EDITOR and send the comments to it as one DM",
		Long: `Open the seat's diff (cotal diff) in $VISUAL or $EDITOR. Write your comments
on lines of their own under the diff line they are about; a line that is not
part of the diff is a comment (start it with > if it would begin with a
space, + or -), and a comment under a file's header is about the whole file.
When the editor exits, every comment goes to the seat as one DM naming the
file and line of each (the line in the seat's version, or in the base's for
a removed line). Write none and nothing is sent.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			seat := args[0]
			rv, err := openReview(seat)
			if err != nil {
				return err
			}
			defer rv.close()
			cmd, err := rv.editor()
			if err != nil {
				return err
			}
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, g.stdout, g.stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("the editor failed: %w; nothing was sent", err)
			}
			comments, rc, err := rv.send(g)
			if err != nil {
				return err
			}
			if asJSON {
				printJSON(g.stdout, map[string]any{"seat": seat, "comments": comments, "sent": rc != nil, "receipt": rc})
				return nil
			}
			fmt.Fprintln(g.stdout, reviewSaid(seat, comments, rc))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comments and the receipt as JSON")
	return cmd
}

// review is one review of a seat's diff: the file the person writes in.
type review struct {
	seat string
	diff *worktree.Diff
	path string
}

// openReview reads the seat's diff into a private review file.
func openReview(seat string) (*review, error) {
	ctx, cancel := gitCtx()
	defer cancel()
	r, err := openRepo(ctx)
	if err != nil {
		return nil, err
	}
	d, err := r.Diff(ctx, seat)
	if err != nil {
		return nil, treeError(err)
	}
	if len(d.Files) == 0 {
		return nil, fmt.Errorf("%s has no changes against %s: nothing to review", seat, d.Base)
	}
	f, err := os.CreateTemp("", "cotal-review-*.diff")
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(worktree.ReviewFile(d))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return nil, err
	}
	return &review{seat: seat, diff: d, path: f.Name()}, nil
}

func (rv *review) close() { _ = os.Remove(rv.path) }

// editor is the person's $VISUAL or $EDITOR on the review file. The editor
// may be a command with arguments (code -w): the shell splits it, and the
// file goes as its own argument.
func (rv *review) editor() (*exec.Cmd, error) {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if strings.TrimSpace(editor) == "" {
		return nil, usagef("no editor: set $EDITOR (or $VISUAL) to the program to write the review in")
	}
	return exec.Command("sh", "-c", editor+` "$1"`, "sh", rv.path), nil
}

// send reads the comments written and sends them to the seat as one DM;
// with none it sends nothing (a nil receipt).
func (rv *review) send(g *globals) ([]worktree.Comment, *mesh.Receipt, error) {
	b, err := os.ReadFile(rv.path)
	if err != nil {
		return nil, nil, err
	}
	comments := worktree.ParseReview(string(b))
	if len(comments) == 0 {
		return []worktree.Comment{}, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := g.endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}})
	if err != nil {
		return nil, nil, err
	}
	defer e.Close()
	rc, err := e.DM(ctx, rv.seat, reviewMessage(rv.diff, comments))
	if err != nil {
		return nil, nil, sendError(err)
	}
	return comments, &rc, nil
}

// reviewSaid is what a review did, in a line.
func reviewSaid(seat string, comments []worktree.Comment, rc *mesh.Receipt) string {
	if rc == nil {
		return "no comments written: nothing sent"
	}
	return fmt.Sprintf("sent %d comment(s) on %s's diff as one DM: %s", len(comments), seat, wire.Inert(rc.String()))
}

// dashboardReview is the dashboard's R: the review's editor, and what to do
// once it exits.
func dashboardReview(g *globals) tui.ReviewFunc {
	return func(_ context.Context, seat string) (*exec.Cmd, func(error) (string, error), error) {
		rv, err := openReview(seat)
		if err != nil {
			return nil, nil, err
		}
		cmd, err := rv.editor()
		if err != nil {
			rv.close()
			return nil, nil, err
		}
		return cmd, func(edited error) (string, error) {
			defer rv.close()
			if edited != nil {
				return "", fmt.Errorf("the editor failed: %w; nothing was sent", edited)
			}
			comments, rc, err := rv.send(g)
			if err != nil {
				return "", err
			}
			return reviewSaid(seat, comments, rc), nil
		}, nil
	}
}

// reviewMessage is the DM a review becomes: each comment under the file,
// line and code it is about.
func reviewMessage(d *worktree.Diff, comments []worktree.Comment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Review of your work on branch %s (against %s): %d comment(s).\n", d.Branch, d.Base, len(comments))
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
