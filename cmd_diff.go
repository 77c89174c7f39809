package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

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
			ctx, cancel := gitCtx()
			defer cancel()
			r, err := openRepo(ctx)
			if err != nil {
				return err
			}
			d, err := r.Diff(ctx, args[0])
			if err != nil {
				return treeError(err)
			}
			if asJSON {
				d.Files = emptyNotNil(d.Files)
				printJSON(g.stdout, d)
				return nil
			}
			printDiffStat(g.stdout, d)
			if !stat && d.Patch != "" {
				fmt.Fprint(g.stdout, "\n"+d.Patch)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON (the file list, counts and the patch)")
	cmd.Flags().BoolVar(&stat, "stat", false, "print the file list and counts only")
	return cmd
}

// diffText is a seat's diff as the dashboard's D shows it: the head and
// the patch.
func diffText(ctx context.Context, seat string) (string, error) {
	r, err := openRepo(ctx)
	if err != nil {
		return "", err
	}
	d, err := r.Diff(ctx, seat)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	printDiffStat(&b, d)
	if d.Patch != "" {
		b.WriteString("\n" + d.Patch)
	}
	return b.String(), nil
}

// printDiffStat prints a diff's head: what it compares, then one line per file.
func printDiffStat(w io.Writer, d *worktree.Diff) {
	if len(d.Files) == 0 {
		fmt.Fprintf(w, "%s (branch %s) has no changes against %s\n", d.Seat, d.Branch, d.Base)
		return
	}
	fmt.Fprintf(w, "%s (branch %s) against %s: %d file(s), +%d -%d\n", d.Seat, d.Branch, d.Base, len(d.Files), d.Added, d.Deleted)
	for _, f := range d.Files {
		if f.Binary {
			fmt.Fprintf(w, "  %s (binary)\n", f.Path)
			continue
		}
		fmt.Fprintf(w, "  %s +%d -%d\n", f.Path, f.Added, f.Deleted)
	}
}
