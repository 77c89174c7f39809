package config

import (
	"errors"
	"io/fs"
	"os"

	"github.com/nats-io/jwt/v2"

	"github.com/cotal-go/cotal/mesh/wire"
)

// maxCredsFile is far above any creds file mint writes (about 1 KiB).
const maxCredsFile = 64 << 10

// CredsError is a creds file that cannot be used, and why in words: no
// such file, a directory, no cotal credential, a key that does not parse.
type CredsError struct {
	Path    string
	Problem string
}

func (e *CredsError) Error() string { return e.Path + ": " + e.Problem }

// LoadCreds reads and checks a creds file: a regular file of sane size
// holding a cotal user JWT and a key that parses. Every way in that takes
// creds goes through it, so a wrong file is refused the same way
// everywhere (a *CredsError).
func LoadCreds(path string) (wire.CredsInfo, error) {
	bad := func(what string) error { return &CredsError{Path: path, Problem: what} }
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return wire.CredsInfo{}, bad("no such file (`cotal mint <name>` writes one under the store; then --creds <name>)")
	case err != nil:
		return wire.CredsInfo{}, bad("cannot be read: " + OpenProblem(err))
	case fi.IsDir():
		return wire.CredsInfo{}, bad("is a directory, not a creds file")
	case !fi.Mode().IsRegular():
		return wire.CredsInfo{}, bad("is not a regular file, so not a creds file")
	case fi.Size() > maxCredsFile:
		return wire.CredsInfo{}, bad("is too large to be a creds file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return wire.CredsInfo{}, bad("cannot be read: " + OpenProblem(err))
	}
	info, err := wire.ParseCreds(b)
	if err != nil {
		if errors.Is(err, wire.ErrNotCreds) {
			return wire.CredsInfo{}, bad(err.Error())
		}
		return wire.CredsInfo{}, bad("not a cotal creds file: " + err.Error())
	}
	kp, err := jwt.ParseDecoratedNKey(b)
	if err != nil {
		return wire.CredsInfo{}, bad("not a creds file: its key does not parse (" + err.Error() + ")")
	}
	kp.Wipe()
	return info, nil
}

// OpenProblem says in words why a path could not be opened.
func OpenProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
