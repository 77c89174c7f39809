package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Starter starts the launcher process: its path, its arguments, extra
// process attributes (nil: none) and the write end of the report pipe, to
// be handed over as fd 3. It returns once the process runs.
type Starter func(path string, args []string, attr *syscall.SysProcAttr, report *os.File) error

// Plan is one launch: the agent's program, run through the launcher.
type Plan struct {
	Launcher string   // the launcher executable (the cotal binary)
	Path     string   // the agent's program, as exec resolves it
	Argv0    string   // its argv[0]
	Args     []string // its arguments
	// NoNamespace skips the mount-namespace attempt.
	NoNamespace bool
}

// reportLimit bounds what the manager reads from a launcher.
const reportLimit = 4096

// Start starts p through start, in new namespaces first where the kernel
// may allow them, plainly when that start fails, and waits at most timeout
// for the launcher's report. The error is the plain start's: the program
// did not run.
func Start(p Plan, timeout time.Duration, start Starter) (Report, error) {
	why := "the manager was told not to use a mount namespace"
	if !p.NoNamespace {
		attr, host, err := namespaceAttr()
		if err == nil {
			var rep Report
			if rep, err = startOnce(p, "ns:"+host, attr, timeout, start); err == nil {
				return rep, nil
			}
		}
		why = "no mount namespace: " + err.Error()
	}
	return startOnce(p, "plain:"+why, nil, timeout, start)
}

func startOnce(p Plan, ns string, attr *syscall.SysProcAttr, timeout time.Duration, start Starter) (Report, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return Report{}, err
	}
	defer r.Close()
	args := append([]string{Arg, ns, p.Path, p.Argv0}, p.Args...)
	err = start(p.Launcher, args, attr, w)
	w.Close()
	if err != nil {
		return Report{}, err
	}
	return readReport(r, timeout), nil
}

// readReport reads the launcher's report: it ends when the launcher
// closes the pipe, which it does before it execs the agent.
func readReport(r *os.File, timeout time.Duration) Report {
	_ = r.SetReadDeadline(time.Now().Add(timeout))
	b, err := io.ReadAll(io.LimitReader(r, reportLimit))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return unsandboxed("the launcher did not say within %s what it achieved", timeout)
	}
	var rep Report
	if len(b) == 0 {
		return unsandboxed("the launcher exited without saying what it achieved")
	}
	if json.Unmarshal(b, &rep) != nil || rep.Mode == "" {
		return unsandboxed("the launcher's report is garbled")
	}
	if !rep.Sandboxed() {
		rep.Mode = None
	}
	return rep
}

// Probe says how a seat started from here would be sandboxed, protecting
// protect: it runs launcher (the cotal binary) as a seat's launcher would
// run, over a scratch launch directory, with a program that exits at once.
// Where none of protect exists yet (a space never started), it protects a
// scratch directory instead.
func Probe(launcher string, protect []string) Report {
	dir, err := os.MkdirTemp("", "cotal-probe-")
	if err != nil {
		return unsandboxed("probe: %v", err)
	}
	defer os.RemoveAll(dir)
	if !slices.ContainsFunc(protect, exists) {
		scratch := filepath.Join(dir, "protected")
		if err := os.Mkdir(scratch, 0o700); err != nil {
			return unsandboxed("probe: %v", err)
		}
		protect = []string{scratch}
	}
	material := filepath.Join(dir, "launch.json")
	if err := WriteMaterial(material, Material{Dir: dir, Protect: protect}); err != nil {
		return unsandboxed("probe: %v", err)
	}
	var cmd *exec.Cmd
	rep, err := Start(Plan{Launcher: launcher, Path: launcher, Argv0: launcher, Args: []string{probeExit}}, 5*time.Second,
		func(path string, args []string, attr *syscall.SysProcAttr, report *os.File) error {
			cmd = exec.Command(path, args...)
			cmd.Env = append(os.Environ(), MaterialEnv+"="+material)
			cmd.SysProcAttr = attr
			cmd.ExtraFiles = []*os.File{report}
			return cmd.Start()
		})
	if err != nil {
		return unsandboxed("probe: starting %s: %v", launcher, err)
	}
	_ = cmd.Wait()
	return rep
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
