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
			ctx, cancel := gitCtx()
			defer cancel()
			r, err := openRepo(ctx)
			if err != nil {
				return err
			}
			d, err := r.Diff(ctx, seat)
			if err != nil {
				return treeError(err)
			}
			if len(d.Files) == 0 {
				return fmt.Errorf("%s has no changes against %s: nothing to review", seat, d.Base)
			}
			text, err := editReview(g, worktree.ReviewFile(d))
			if err != nil {
				return err
			}
			comments := worktree.ParseReview(text)
			if len(comments) == 0 {
				if asJSON {
					printJSON(g.stdout, map[string]any{"seat": seat, "comments": []worktree.Comment{}, "sent": false})
				} else {
					fmt.Fprintln(g.stdout, "no comments written: nothing sent")
				}
				return nil
			}
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer scancel()
			e, err := g.endpoint(sctx, mesh.Options{OneShot: true, Subscribe: []string{}})
			if err != nil {
				return err
			}
			defer e.Close()
			rc, err := e.DM(sctx, seat, reviewMessage(d, comments))
			if err != nil {
				return sendError(err)
			}
			if asJSON {
				printJSON(g.stdout, map[string]any{"seat": seat, "comments": comments, "sent": true, "receipt": rc})
				return nil
			}
			fmt.Fprintf(g.stdout, "sent %d comment(s) on %s's diff as one DM: %s\n", len(comments), seat, rc)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comments and the receipt as JSON")
	return cmd
}

// editReview writes text to a private file, runs the person's editor on
// it, and returns what they saved.
func editReview(g *globals, text string) (string, error) {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if strings.TrimSpace(editor) == "" {
		return "", usagef("no editor: set $EDITOR (or $VISUAL) to the program to write the review in")
	}
	f, err := os.CreateTemp("", "cotal-review-*.diff")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	// The editor may be a command with arguments (code -w): the shell
	// splits it, and the file goes as its own argument.
	cmd := exec.Command("sh", "-c", editor+` "$1"`, "sh", f.Name())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, g.stdout, g.stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("the editor (%s) failed: %w; nothing was sent", editor, err)
	}
	b, err := os.ReadFile(f.Name())
	return string(b), err
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
