package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/mesh"
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
			editor, sent, err := startReview(context.Background(), g, args[0])
			if err != nil {
				return err
			}
			editor.Stdin, editor.Stdout, editor.Stderr = os.Stdin, g.stdout, g.stderr
			comments, rc, err := sent(editor.Run())
			switch {
			case err != nil:
				return err
			case asJSON:
				clirender.ReviewJSON(g.stdout, args[0], comments, rc)
			default:
				fmt.Fprintln(g.stdout, clirender.Reviewed(args[0], comments, rc))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comments and the receipt as JSON")
	return cmd
}

// startReview opens a review of the seat's diff: the editor to run on it,
// and what sends the comments once the editor exited (a nil receipt when
// there were none, and nothing sent).
func startReview(ctx context.Context, g *globals, seat string) (*exec.Cmd, func(edited error) ([]worktree.Comment, *mesh.Receipt, error), error) {
	var rv *worktree.Review
	err := inRepo(ctx, func(ctx context.Context, r *worktree.Repo) (err error) {
		rv, err = r.StartReview(ctx, seat)
		return err
	})
	if err != nil {
		return nil, nil, treeError(err)
	}
	editor, err := rv.Editor(os.Getenv)
	if err != nil {
		rv.Close()
		return nil, nil, treeError(err)
	}
	return editor, func(edited error) ([]worktree.Comment, *mesh.Receipt, error) {
		defer rv.Close()
		if edited != nil {
			return nil, nil, fmt.Errorf("the editor failed: %w; nothing was sent", edited)
		}
		comments, err := rv.Comments()
		if err != nil || len(comments) == 0 {
			return comments, nil, err
		}
		var rc mesh.Receipt
		err = g.caller().OneShot(mesh.Options{Subscribe: []string{}}, func(ctx context.Context, e *mesh.Endpoint) (err error) {
			if rc, err = e.DM(ctx, rv.Seat, rv.Message(comments)); err != nil {
				return sendError(err)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		return comments, &rc, nil
	}, nil
}

// dashboardReview is the dashboard's R: the review's editor, and what to do
// once it exits.
func dashboardReview(g *globals) tui.ReviewFunc {
	return func(ctx context.Context, seat string) (*exec.Cmd, func(error) (string, error), error) {
		editor, sent, err := startReview(ctx, g, seat)
		if err != nil {
			return nil, nil, err
		}
		return editor, func(edited error) (string, error) {
			comments, rc, err := sent(edited)
			if err != nil {
				return "", err
			}
			return clirender.Reviewed(seat, comments, rc), nil
		}, nil
	}
}
