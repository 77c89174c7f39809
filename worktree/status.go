package worktree

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
)

// The states of a worktree, as ps and cotal worktree ls say them.
const (
	Clean       = "clean"       // nothing a remove would lose
	Uncommitted = "uncommitted" // files changed and not committed
	Unmerged    = "unmerged"    // commits its base does not have
	Missing     = "missing"     // its directory is gone
)

// Status is a worktree's record with what is in it now.
type Status struct {
	Record
	State       string   `json:"state"`
	Uncommitted []string `json:"uncommitted,omitempty"` // changed paths, the setup's copies left out
	Ahead       int      `json:"ahead"`                 // commits on its branch its base lacks
	Holder      string   `json:"holder,omitempty"`      // the seat holding it, "" when none
}

// Status says whether the seat's worktree is clean, has uncommitted work
// or commits its base lacks (uncommitted wins when both).
func (r *Repo) Status(ctx context.Context, seat string) (*Status, error) {
	rec, err := r.Get(seat)
	if err != nil {
		return nil, err
	}
	st := &Status{Record: *rec, Holder: r.Holder(seat)}
	if r.branchExists(ctx, rec.Branch) {
		if st.Ahead, err = r.ahead(ctx, rec); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(rec.Path); err != nil {
		st.State = Missing
		return st, nil
	}
	if st.Uncommitted, err = r.changed(ctx, rec); err != nil {
		return nil, err
	}
	switch {
	case len(st.Uncommitted) > 0:
		st.State = Uncommitted
	case st.Ahead > 0:
		st.State = Unmerged
	default:
		st.State = Clean
	}
	return st, nil
}

// List is the status of every worktree cotal made here.
func (r *Repo) List(ctx context.Context) ([]*Status, error) {
	recs, err := r.Records()
	if err != nil {
		return nil, err
	}
	out := make([]*Status, 0, len(recs))
	for _, rec := range recs {
		st, err := r.Status(ctx, rec.Seat)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// changed are the paths git status names in the worktree, untracked ones
// included, without the files setup copied in.
func (r *Repo) changed(ctx context.Context, rec *Record) ([]string, error) {
	out, err := git(ctx, rec.Path, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	var paths []string
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		p := f[3:]
		if f[0] == 'R' || f[0] == 'C' {
			i++ // the source path of a rename follows
		}
		if !slices.Contains(rec.Copied, r.projectRel(p)) {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// projectRel is a path git gives relative to the top level, made relative
// to the project directory the way setup lists files.
func (r *Repo) projectRel(p string) string {
	if r.rel == "." {
		return p
	}
	if rest, ok := strings.CutPrefix(p, r.rel+"/"); ok {
		return rest
	}
	return "../" + p
}

// target is what the worktree's work is measured against: its base branch
// when it has one that still exists, else the commit it was made from.
func (r *Repo) target(ctx context.Context, rec *Record) string {
	if rec.Base != "" && r.branchExists(ctx, rec.Base) {
		return "refs/heads/" + rec.Base
	}
	return rec.BaseCommit
}

// ahead counts the commits on the worktree's branch its base lacks.
func (r *Repo) ahead(ctx context.Context, rec *Record) (int, error) {
	out, err := git(ctx, r.Root, "rev-list", "--count", r.target(ctx, rec)+"..refs/heads/"+rec.Branch, "--")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}
