package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/worktree"
)

// worktreeCommands are the commands on seats' git worktrees.
func worktreeCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{newWorktreeCmd(g), newDiffCmd(g), newMergeCmd(g), newReviewCmd(g)}
}

func newWorktreeCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worktree",
		Short: "List, remove and prune the seats' git worktrees",
		Long: `A seat spawned with --worktree (or from a persona with worktree: true) works
in .cotal/worktrees/<seat> on branch cotal/<seat>. When it stops, a worktree
with nothing in it is removed; one with uncommitted or unmerged work is kept
until you merge it (cotal merge) or remove it here.`,
	}
	var asJSON, force bool
	ls := &cobra.Command{Use: "ls", Short: "List the seats' worktrees and what is in them", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			list, dir, err := clirun.Worktrees(context.Background())
			if err != nil {
				return err
			}
			return clirender.Worktrees(g.stdout, list, dir, asJSON)
		}}
	rm := &cobra.Command{Use: "rm <seat>", Short: "Remove a seat's worktree (its branch stays if it has commits)", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			res, err := clirun.RemoveWorktree(context.Background(), args[0], force)
			return shown(err, func() { clirender.Removed(g.stdout, res, asJSON) })
		}}
	rm.Flags().BoolVar(&force, "force", false, "remove it even with uncommitted changes (they are lost) or while a seat holds it")
	prune := &cobra.Command{Use: "prune", Short: "Remove every worktree no seat holds that has nothing to lose", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			done, err := clirun.PruneWorktrees(context.Background())
			clirender.Pruned(g.stdout, done, err != nil, asJSON)
			return err
		}}
	for _, c := range []*cobra.Command{ls, rm, prune} {
		c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	}
	cmd.AddCommand(ls, rm, prune)
	return cmd
}

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
			d, err := clirun.Diff(context.Background(), args[0])
			return shown(err, func() { clirender.Diff(g.stdout, d, stat, asJSON) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON (the file list, counts and the patch)")
	cmd.Flags().BoolVar(&stat, "stat", false, "print the file list and counts only")
	return cmd
}

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
			m, err := clirun.Merge(context.Background(), args[0], rebase)
			var ce *worktree.ConflictError
			if errors.As(err, &ce) && asJSON {
				clirender.MergeConflict(g.stdout, ce)
				return exitError{exitFail}
			}
			return shown(err, func() { clirender.Merged(g.stdout, m, asJSON) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&rebase, "rebase", false, "rebase the seat's branch onto the base and fast-forward, instead of a merge commit")
	return cmd
}
