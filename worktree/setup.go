package worktree

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// ErrCopy is returned when a file setup lists cannot be copied.
var ErrCopy = errors.New("setup copy refused")

// Copy copies the files a persona's setup lists (paths relative to the
// project directory, such as .env) from the main checkout into the seat's
// worktree, and records them so status and diff leave them out. A file
// that is a symlink, not a regular file, or whose destination would leave
// the worktree (a directory on the branch that is a symlink) is refused; a
// file the main checkout lacks is refused naming it.
func (r *Repo) Copy(seat string, files []string) error {
	rec, err := r.Get(seat)
	if err != nil {
		return err
	}
	dstRoot, err := filepath.EvalSymlinks(r.Cwd(rec))
	if err != nil {
		return err
	}
	for _, name := range files {
		rel, err := checkRel(name)
		if err != nil {
			return err
		}
		if err := copyInto(filepath.Join(r.Project, rel), dstRoot, rel); err != nil {
			return err
		}
		if !slices.Contains(rec.Copied, rel) {
			rec.Copied = append(rec.Copied, rel)
		}
	}
	return r.write(rec)
}

func copyInto(src, dstRoot, rel string) error {
	fi, err := os.Lstat(src)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: setup lists %s, which the main checkout does not have (%s)", ErrCopy, rel, src)
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file (a symlink or directory is not copied)", ErrCopy, src)
	}
	dir := filepath.Join(dstRoot, filepath.Dir(rel))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if real != dstRoot && !strings.HasPrefix(real, dstRoot+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s would be written to %s, outside the worktree", ErrCopy, rel, real)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	dst := filepath.Join(real, filepath.Base(rel))
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, fi.Mode().Perm())
	if err != nil {
		return fmt.Errorf("%w: writing %s: %v", ErrCopy, dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
