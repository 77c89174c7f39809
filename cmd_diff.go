package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/worktree"
)

func newDiffCmd(g *globals) *cobra.Command {
	var asJSON, stat bool
	cmd := &cobra.Command{
		Use:   "diff <seat>",
		Short: "Show a seat's changes in its worktree against its base",
		Long: `Show what a seat changed in its worktree since its branch left its base:
its commits, staged and unstaged edits and new files alike, as a file list
with line counts and then the diff. Files its persona's setup copied in (.env)
are left out. --stat prints the file list alone.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return inRepo(context.Background(), func(ctx context.Context, r *worktree.Repo) error {
				d, err := r.Diff(ctx, args[0])
				if err != nil {
					return treeError(err)
				}
				clirender.Diff(g.stdout, d, stat, asJSON)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON (the file list, counts and the patch)")
	cmd.Flags().BoolVar(&stat, "stat", false, "print the file list and counts only")
	return cmd
}

// diffText is a seat's diff as the dashboard's D shows it.
func diffText(ctx context.Context, seat string) (text string, err error) {
	err = inRepo(ctx, func(ctx context.Context, r *worktree.Repo) error {
		d, err := r.Diff(ctx, seat)
		if err == nil {
			text = clirender.DiffText(d)
		}
		return err
	})
	return text, err
}
