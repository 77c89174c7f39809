package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/worktree"
)

// worktreeCommands are the commands on seats' git worktrees.
func worktreeCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{newWorktreeCmd(g), newDiffCmd(g), newMergeCmd(g), newReviewCmd(g)}
}

// inRepo runs fn on the git repository of the project holding the working
// directory, with a bound on its git work.
func inRepo(ctx context.Context, fn func(context.Context, *worktree.Repo) error) error {
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
	return fn(ctx, r)
}

// treeError gives a worktree refusal its exit code: a bad name, a missing
// worktree or no editor is the person's input (2), the rest a failure (1).
func treeError(err error) error {
	for _, e := range []error{worktree.ErrBadName, worktree.ErrNoWorktree, worktree.ErrNoEditor} {
		if errors.Is(err, e) {
			return usage(err)
		}
	}
	return err
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
			return inRepo(context.Background(), func(ctx context.Context, r *worktree.Repo) error {
				list, err := r.List(ctx)
				if err != nil {
					return err
				}
				return clirender.Worktrees(g.stdout, list, r.Dir(), asJSON)
			})
		}}
	rm := &cobra.Command{Use: "rm <seat>", Short: "Remove a seat's worktree (its branch stays if it has commits)", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return inRepo(context.Background(), func(ctx context.Context, r *worktree.Repo) error {
				res, err := r.Remove(ctx, args[0], force)
				if err != nil {
					return treeError(err)
				}
				clirender.Removed(g.stdout, res, asJSON)
				return nil
			})
		}}
	rm.Flags().BoolVar(&force, "force", false, "remove it even with uncommitted changes (they are lost) or while a seat holds it")
	prune := &cobra.Command{Use: "prune", Short: "Remove every worktree no seat holds that has nothing to lose", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return inRepo(context.Background(), func(ctx context.Context, r *worktree.Repo) error {
				done, err := r.Prune(ctx)
				clirender.Pruned(g.stdout, done, err != nil, asJSON)
				return err
			})
		}}
	for _, c := range []*cobra.Command{ls, rm, prune} {
		c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	}
	cmd.AddCommand(ls, rm, prune)
	return cmd
}

// worktreeNote says, for ps, where a seat works and what its ended
// worktree kept.
var worktreeNote = clirender.WorktreeNote
