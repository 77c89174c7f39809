package clirender

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/worktree"
)

// emptyNotNil is l, or an empty list where l is nil, so JSON prints [].
func emptyNotNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// Worktrees prints `cotal worktree ls`: a row per seat's worktree, or that
// there is none in dir.
func Worktrees(w io.Writer, list []*worktree.Status, dir string, asJSON bool) error {
	switch {
	case asJSON:
		JSON(w, map[string]any{"worktrees": emptyNotNil(list)})
		return nil
	case len(list) == 0:
		fmt.Fprintf(w, "no seat worktrees in %s\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEAT\tSTATE\tBRANCH\tBASE\tAHEAD\tCHANGED\tHELD BY\tPATH")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", s.Seat, s.State, s.Branch, Dash(s.Base), s.Ahead, len(s.Uncommitted), Dash(s.Holder), s.Path)
	}
	return tw.Flush()
}

// Removed prints a worktree `worktree rm` removed.
func Removed(w io.Writer, res *worktree.Removed, asJSON bool) {
	if asJSON {
		JSON(w, res)
		return
	}
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
	fmt.Fprintln(w, line)
}

// Pruned prints the worktrees a prune removed; failed says it stopped on
// an error, so that nothing pruned is not said as nothing to prune.
func Pruned(w io.Writer, done []*worktree.Removed, failed, asJSON bool) {
	if asJSON {
		JSON(w, map[string]any{"removed": emptyNotNil(done)})
		return
	}
	for _, res := range done {
		Removed(w, res, false)
	}
	if len(done) == 0 && !failed {
		fmt.Fprintln(w, "nothing to prune: every worktree left is held by a seat or has work in it (cotal worktree ls)")
	}
}

// Diff prints `cotal diff`: its head, then the patch unless stat.
func Diff(w io.Writer, d *worktree.Diff, stat, asJSON bool) {
	if asJSON {
		d.Files = emptyNotNil(d.Files)
		JSON(w, d)
		return
	}
	diffStat(w, d)
	if !stat && d.Patch != "" {
		fmt.Fprint(w, "\n"+d.Patch)
	}
}

// DiffText is a seat's diff as the dashboard's D shows it: the head and
// the patch.
func DiffText(d *worktree.Diff) string {
	var b strings.Builder
	Diff(&b, d, false, false)
	return b.String()
}

// diffStat prints a diff's head: what it compares, then one line per file.
func diffStat(w io.Writer, d *worktree.Diff) {
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

// Merged prints what `cotal merge` did.
func Merged(w io.Writer, m *worktree.Merged, asJSON bool) {
	if asJSON {
		JSON(w, m)
		return
	}
	how := "merged"
	if m.Rebased {
		how = "rebased and fast-forwarded"
	}
	fmt.Fprintf(w, "%s %s (%d commit(s)) into %s, now at %.12s\n", how, m.Branch, m.Commits, m.Base, m.Head)
}

// MergeConflict prints, for merge --json, the merge refused for its
// conflicts.
func MergeConflict(w io.Writer, ce *worktree.ConflictError) {
	JSON(w, map[string]any{"seat": ce.Seat, "branch": ce.Branch, "base": ce.Base, "conflicts": ce.Files, "merged": false})
}

// Reviewed is what a review did, in a line: rc nil when no comment was
// written and nothing sent.
func Reviewed(seat string, comments []worktree.Comment, rc *mesh.Receipt) string {
	if rc == nil {
		return "no comments written: nothing sent"
	}
	return fmt.Sprintf("sent %d comment(s) on %s's diff as one DM: %s", len(comments), seat, wire.Inert(rc.String()))
}

// ReviewJSON prints a review for --json.
func ReviewJSON(w io.Writer, seat string, comments []worktree.Comment, rc *mesh.Receipt) {
	JSON(w, map[string]any{"seat": seat, "comments": comments, "sent": rc != nil, "receipt": rc})
}

// WorktreeNote says, for ps, where a seat works and what its ended
// worktree kept.
func WorktreeNote(note func(string, ...any), r client.CensusRow) {
	w := r.Worktree
	switch {
	case w == nil || w.Removed:
	case w.Kept != "":
		note("%s ended with %s work kept in worktree %s (branch %s): cotal diff %s, cotal merge %s, or cotal worktree rm %s --force",
			r.Name, w.Kept, w.Path, w.Branch, r.Name, r.Name, r.Name)
	case r.Running():
		note("%s works in worktree %s on branch %s (base %s)", r.Name, w.Path, w.Branch, OrDefault(w.Base, "a commit"))
	}
}
