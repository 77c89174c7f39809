package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/worktree"
)

func newMergeCmd(g *globals) *cobra.Command {
	var asJSON, rebase bool
	cmd := &cobra.Command{
		Use:   "merge <seat>",
		Short: "Merge a seat's branch into its base in the main checkout",
		Long: `Merge the commits on a seat's branch into the branch it was made from, in
the main checkout (which must be on that branch, with no changes). A merge
that would conflict is refused before anything changes, naming the files;
the main checkout is never left half merged. --rebase rebases the seat's
branch onto the base (in its worktree) and fast-forwards the base instead of
making a merge commit. Uncommitted changes in the worktree are refused: only
commits are merged.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return inRepo(context.Background(), func(ctx context.Context, r *worktree.Repo) error {
				m, err := r.Merge(ctx, args[0], rebase)
				var ce *worktree.ConflictError
				if errors.As(err, &ce) && asJSON {
					clirender.MergeConflict(g.stdout, ce)
					return exitError{exitFail}
				}
				if err != nil {
					return treeError(err)
				}
				clirender.Merged(g.stdout, m, asJSON)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&rebase, "rebase", false, "rebase the seat's branch onto the base and fast-forward, instead of a merge commit")
	return cmd
}
