package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cotal-go/cotal/mesh/wire"
)

// DefaultSpace is the space used when nothing else names one.
const DefaultSpace = "default"

// Where a resolved space name came from, for messages that explain it.
const (
	FromFlag    = "--space"
	FromCreds   = "creds file"
	FromUse     = "cotal use"
	FromRunning = "running for this folder"
	FromProject = "project folder"
	FromDefault = "default"
)

// Resolution is a resolved space and why it was chosen.
type Resolution struct {
	Space  string
	Source string // one of the From* constants
	Detail string // e.g. the project folder that named it
	// Folder is the folder the command runs for: the one a mesh started
	// here would serve (see Folder).
	Folder string
}

// LiveMesh is a mesh running now, as space resolution needs to know it.
type LiveMesh struct {
	Space  string
	Folder string // the folder it serves, "" when its record does not say
	PID    int
}

// SpaceQuery is what ResolveSpace decides from.
type SpaceQuery struct {
	Flag  string // --space (or COTAL_SPACE)
	Creds string // --creds (or COTAL_CREDS): the space its credential names
	Cwd   string
	Data  string
	// Running lists the meshes running now; it is asked only when nothing
	// names the space. nil: none is.
	Running func() ([]LiveMesh, error)
}

// AmbiguousError is returned by ResolveSpace when nothing names the space
// and more than one mesh runs for the folder.
type AmbiguousError struct {
	Folder string
	Meshes []LiveMesh
}

func (e *AmbiguousError) Error() string {
	names := make([]string, len(e.Meshes))
	for i, m := range e.Meshes {
		names[i] = fmt.Sprintf("%s (pid %d)", m.Space, m.PID)
	}
	return fmt.Sprintf("%d meshes run for %s: %s; name one with --space (e.g. --space %s), COTAL_SPACE or `cotal use`",
		len(e.Meshes), e.Folder, strings.Join(names, ", "), e.Meshes[0].Space)
}

// ResolveSpace picks the space: --space; else the space the --creds
// credential names; else the `cotal use` default; else the one mesh
// running for this folder (several are refused with an *AmbiguousError);
// else the name of the nearest project .cotal/ folder above cwd; else
// "default". So a mesh started before the folder had a .cotal/ goes on
// serving it. An explicit name that is not a valid space is refused, never
// rewritten; a folder name is sanitized because the user did not type it
// as a space name.
func ResolveSpace(q SpaceQuery) (Resolution, error) {
	folder := Folder(q.Cwd)
	if q.Flag != "" {
		if err := wire.ValidSpace(q.Flag); err != nil {
			return Resolution{}, err
		}
		return Resolution{Space: q.Flag, Source: FromFlag, Folder: folder}, nil
	}
	if sp := credsSpace(q.Creds); sp != "" {
		return Resolution{Space: sp, Source: FromCreds, Detail: q.Creds, Folder: folder}, nil
	}
	if def, err := DefaultSpaceChoice(q.Data); err != nil {
		return Resolution{}, err
	} else if def != "" {
		return Resolution{Space: def, Source: FromUse, Folder: folder}, nil
	}
	if q.Running != nil {
		live, err := q.Running()
		if err != nil {
			return Resolution{}, err
		}
		mine := ServingFolder(live, folder)
		switch {
		case len(mine) == 1:
			return Resolution{Space: mine[0].Space, Source: FromRunning, Detail: folder, Folder: folder}, nil
		case len(mine) > 1:
			return Resolution{}, &AmbiguousError{Folder: folder, Meshes: mine}
		}
	}
	if dir := ProjectDir(q.Cwd); dir != "" {
		name := wire.SanitizeToken(filepath.Base(dir))
		return Resolution{Space: name, Source: FromProject, Detail: dir, Folder: folder}, nil
	}
	return Resolution{Space: DefaultSpace, Source: FromDefault, Folder: folder}, nil
}

// ServingFolder returns the meshes of live that serve folder, sorted by
// space.
func ServingFolder(live []LiveMesh, folder string) []LiveMesh {
	var out []LiveMesh
	for _, m := range live {
		if m.Folder != "" && m.Folder == folder {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Space < out[j].Space })
	return out
}

// credsSpace is the space a creds file's credential names, or "" when the
// file cannot be read as one: connecting with it reports that.
func credsSpace(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	info, err := wire.ParseCreds(b)
	if err != nil || wire.ValidSpace(info.Space) != nil {
		return ""
	}
	return info.Space
}

// Folder is the folder a mesh started in cwd serves, and that a command
// run in cwd belongs to: the nearest project folder (one holding .cotal/)
// at or above cwd, else cwd itself, with symlinks resolved so two spellings
// of one folder agree.
func Folder(cwd string) string {
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	if dir := ProjectDir(cwd); dir != "" {
		return dir
	}
	return filepath.Clean(cwd)
}

// ProjectDir returns the nearest folder at or above cwd that holds a .cotal
// directory, or "" when there is none. The home directory's own ~/.cotal does
// not make home a project.
func ProjectDir(cwd string) string {
	home, _ := os.UserHomeDir()
	realHome, err := filepath.EvalSymlinks(home)
	if err != nil {
		realHome = home
	}
	dir := filepath.Clean(cwd)
	for {
		if dir != home && dir != realHome {
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
