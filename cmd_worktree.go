package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/worktree"
)

// worktreeCommands are the commands on seats' git worktrees.
func worktreeCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{newWorktreeCmd(g), newDiffCmd(g), newMergeCmd(g), newReviewCmd(g)}
}

// openRepo is the git repository of the project holding the working
// directory.
func openRepo(ctx context.Context) (*worktree.Repo, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	dir := config.ProjectDir(cwd)
	if dir == "" {
		return nil, usagef("no project here: no .cotal directory in %s or above (cotal init makes one)", cwd)
	}
	return worktree.Open(ctx, dir)
}

// gitCtx bounds a command's git work.
func gitCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Minute)
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
			ctx, cancel := gitCtx()
			defer cancel()
			r, err := openRepo(ctx)
			if err != nil {
				return err
			}
			list, err := r.List(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				printJSON(g.stdout, map[string]any{"worktrees": emptyNotNil(list)})
				return nil
			}
			if len(list) == 0 {
				fmt.Fprintf(g.stdout, "no seat worktrees in %s\n", r.Dir())
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SEAT\tSTATE\tBRANCH\tBASE\tAHEAD\tCHANGED\tHELD BY\tPATH")
			for _, s := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", s.Seat, s.State, s.Branch, dash(s.Base), s.Ahead, len(s.Uncommitted), dash(s.Holder), s.Path)
			}
			return tw.Flush()
		}}
	rm := &cobra.Command{Use: "rm <seat>", Short: "Remove a seat's worktree (its branch stays if it has commits)", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			ctx, cancel := gitCtx()
			defer cancel()
			r, err := openRepo(ctx)
			if err != nil {
				return err
			}
			res, err := r.Remove(ctx, args[0], force)
			if err != nil {
				return treeError(err)
			}
			if asJSON {
				printJSON(g.stdout, res)
				return nil
			}
			printRemoved(g, res)
			return nil
		}}
	rm.Flags().BoolVar(&force, "force", false, "remove it even with uncommitted changes (they are lost) or while a seat holds it")
	prune := &cobra.Command{Use: "prune", Short: "Remove every worktree no seat holds that has nothing to lose", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctx, cancel := gitCtx()
			defer cancel()
			r, err := openRepo(ctx)
			if err != nil {
				return err
			}
			done, err := r.Prune(ctx)
			if asJSON {
				printJSON(g.stdout, map[string]any{"removed": emptyNotNil(done)})
			} else {
				for _, res := range done {
					printRemoved(g, res)
				}
				if len(done) == 0 && err == nil {
					fmt.Fprintln(g.stdout, "nothing to prune: every worktree left is held by a seat or has work in it (cotal worktree ls)")
				}
			}
			return err
		}}
	for _, c := range []*cobra.Command{ls, rm, prune} {
		c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	}
	cmd.AddCommand(ls, rm, prune)
	return cmd
}

func emptyNotNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

func printRemoved(g *globals, res *worktree.Removed) {
	line := fmt.Sprintf("removed %s's worktree %s", res.Seat, res.Path)
	switch {
	case res.BranchKept && res.AheadCommits > 0:
		line += fmt.Sprintf("; branch %s is kept with %d commit(s) its base lacks", res.Branch, res.AheadCommits)
	case res.BranchKept:
		line += "; branch " + res.Branch + " is kept"
	default:
		line += "; branch " + res.Branch + " deleted (it held nothing)"
	}
	if res.Discarded {
		line += "; its uncommitted changes were thrown away"
	}
	fmt.Fprintln(g.stdout, line)
}

// treeError gives a worktree refusal its exit code: a bad name or a
// missing worktree is the person's input (2), the rest a failure (1).
func treeError(err error) error {
	for _, e := range []error{worktree.ErrBadName, worktree.ErrNoWorktree} {
		if errors.Is(err, e) {
			return usage(err)
		}
	}
	return err
}

// worktreeNote says, for ps, where a seat works and what its ended
// worktree kept.
func worktreeNote(note func(string, ...any), r client.CensusRow) {
	w := r.Worktree
	switch {
	case w == nil || w.Removed:
	case w.Kept != "":
		note("%s ended with %s work kept in worktree %s (branch %s): cotal diff %s, cotal merge %s, or cotal worktree rm %s --force",
			r.Name, w.Kept, w.Path, w.Branch, r.Name, r.Name, r.Name)
	case r.Running():
		note("%s works in worktree %s on branch %s (base %s)", r.Name, w.Path, w.Branch, orDefault(w.Base, "a commit"))
	}
}
