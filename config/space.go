package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cotal-go/cotal/mesh/wire"
)

// DefaultSpace is the space used when nothing else names one.
const DefaultSpace = "default"

// Where a resolved space name came from, for messages that explain it.
const (
	FromFlag    = "--space"
	FromUse     = "cotal use"
	FromProject = "project folder"
	FromDefault = "default"
)

// Resolution is a resolved space and why it was chosen.
type Resolution struct {
	Space  string
	Source string // one of the From* constants
	Detail string // e.g. the project folder that named it
}

// ResolveSpace picks the space: --space, then the `cotal use` default, then
// the nearest project .cotal/ folder above cwd (named after its parent
// folder), then "default". An explicit name that is not a valid space is
// refused, never rewritten; a folder name is sanitized because the user did
// not type it as a space name.
func ResolveSpace(flag, cwd, data string) (Resolution, error) {
	if flag != "" {
		if err := wire.ValidSpace(flag); err != nil {
			return Resolution{}, err
		}
		return Resolution{Space: flag, Source: FromFlag}, nil
	}
	if def, err := DefaultSpaceChoice(data); err != nil {
		return Resolution{}, err
	} else if def != "" {
		return Resolution{Space: def, Source: FromUse}, nil
	}
	if dir := ProjectDir(cwd); dir != "" {
		name := wire.SanitizeToken(filepath.Base(dir))
		return Resolution{Space: name, Source: FromProject, Detail: dir}, nil
	}
	return Resolution{Space: DefaultSpace, Source: FromDefault}, nil
}

// ProjectDir returns the nearest folder at or above cwd that holds a .cotal
// directory, or "" when there is none. The home directory's own ~/.cotal does
// not make home a project.
func ProjectDir(cwd string) string {
	home, _ := os.UserHomeDir()
	dir := filepath.Clean(cwd)
	for {
		if dir != home {
			if st, err := os.Stat(filepath.Join(dir, ".cotal")); err == nil && st.IsDir() {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func currentFile(data string) string { return filepath.Join(data, "current-space") }

// DefaultSpaceChoice returns the space set with `cotal use`, or "".
func DefaultSpaceChoice(data string) (string, error) {
	b, err := os.ReadFile(currentFile(data))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", nil
	}
	if err := wire.ValidSpace(s); err != nil {
		return "", fmt.Errorf("%s holds %q: %w (fix it with `cotal use <space>`)", currentFile(data), s, err)
	}
	return s, nil
}

// SetDefaultSpace records space as the `cotal use` default.
func SetDefaultSpace(data, space string) error {
	if err := wire.ValidSpace(space); err != nil {
		return err
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(currentFile(data), []byte(space+"\n"), 0o644)
}
