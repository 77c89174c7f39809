package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Arg is the hidden first argument that makes the cotal binary (or a test
// binary) the seat launcher.
const Arg = "__seat-launch"

// probeExit is the hidden first argument of the program a probe launches:
// it exits 0 at once.
const probeExit = "__seat-probe-exit"

// MaterialEnv names the seat's launch-material file.
const MaterialEnv = "COTAL_LAUNCH_MATERIAL"

// Modes a launcher reaches.
const (
	// Namespace: the protected directories are hidden under empty mounts in
	// the seat's own mount namespace, and the seat is in a Landlock domain.
	Namespace = "namespace"
	// Landlock: Landlock path rules grant everything but the protected
	// directories (no mount namespace could be made).
	Landlock = "landlock"
	// None: the seat runs unsandboxed; the report says why.
	None = "none"
)

// Report is what the launcher achieved for one seat.
type Report struct {
	Mode   string `json:"mode"`
	Reason string `json:"reason,omitempty"` // why not more (for namespace and landlock: notes)
	// Nested says why a sandbox of the seat's own (a harness's bwrap,
	// which makes user and mount namespaces) cannot run in it; "" when it
	// can, or the seat is unsandboxed.
	Nested string `json:"nested,omitempty"`
}

// Sandboxed reports whether the protected directories are out of reach.
func (r Report) Sandboxed() bool { return r.Mode == Namespace || r.Mode == Landlock }

// String is the report as ps shows it: the mode, or "unsandboxed: <reason>".
func (r Report) String() string {
	if r.Sandboxed() {
		return r.Mode
	}
	why := r.Reason
	if why == "" {
		why = "no reason given"
	}
	return "unsandboxed: " + why
}

func unsandboxed(format string, args ...any) Report {
	return Report{Mode: None, Reason: fmt.Sprintf(format, args...)}
}

// Material is the seat's launch-material file (JSON, 0600, in its launch
// directory): what the seat side needs to act as itself, and what the
// launcher needs to sandbox it. Nothing in it is a secret of anyone but
// the seat.
type Material struct {
	Creds           string `json:"creds,omitempty"` // the seat's own credential; "" on an open mesh
	URL             string `json:"url,omitempty"`
	Space           string `json:"space,omitempty"`
	Name            string `json:"name,omitempty"`
	ID              string `json:"id,omitempty"`
	LifecycleUID    string `json:"lifecycleUid,omitempty"`
	ManagerInstance string `json:"managerInstance,omitempty"`

	// Dir is the seat's launch directory; it stays visible to the seat
	// even where it lies inside a protected directory.
	Dir string `json:"dir"`
	// Protect are the directories the seat must not see into.
	Protect []string `json:"protect,omitempty"`
	// Skip are modes the launcher must not use (the operator's choice;
	// tests force the fallbacks with it).
	Skip []string `json:"skip,omitempty"`
}

func (m Material) skips(mode string) bool { return slices.Contains(m.Skip, mode) }

// WriteMaterial writes m to path, 0600, refusing to replace a file.
func WriteMaterial(path string, m Material) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadMaterial reads a launch-material file.
func ReadMaterial(path string) (Material, error) {
	var m Material
	if path == "" {
		return m, fmt.Errorf("%s is not set", MaterialEnv)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	if m.Dir == "" || !filepath.IsAbs(m.Dir) {
		return m, fmt.Errorf("%s: the launch directory %q is not an absolute path", path, m.Dir)
	}
	return m, nil
}

// Main runs the launcher when the process was started as one, or another
// role of the binary a package registered with Handle (the seat keeper),
// and never returns then; otherwise it returns at once. Call it first in
// main and in TestMain.
func Main() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case Arg:
		os.Exit(launch(os.Args[2:]))
	case probeExit:
		os.Exit(0)
	}
	if fn, ok := roles[os.Args[1]]; ok {
		os.Exit(fn(os.Args[2:]))
	}
}

// roles are the hidden first arguments Handle registered.
var roles = map[string]func(args []string) int{}

// Handle makes Main run fn, with the arguments after arg, when the process
// was started with the hidden first argument arg, and exit with what it
// returns. Call it from an init function: every binary that links the
// registering package and calls Main then plays the role.
func Handle(arg string, fn func(args []string) int) { roles[arg] = fn }

// within reports whether path is dir or lies below it (both clean).
func within(path, dir string) bool {
	if path == dir || dir == "/" {
		return true
	}
	return len(path) > len(dir) && path[:len(dir)] == dir && path[len(dir)] == '/'
}
