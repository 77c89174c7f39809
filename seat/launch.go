package seat

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/cotal-go/cotal/seat/keeper"
	"github.com/cotal-go/cotal/seat/pty"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// materialFile is the launch-material file in a seat's launch directory.
const materialFile = "launch.json"

// reportWait bounds how long a launcher may take to say what it achieved.
const reportWait = 5 * time.Second

// LaunchDir is a seat's launch directory under a run directory: the seat's
// creds and launch material, and nothing of anyone else's. It is the one
// part of the run directory the seat sees.
func LaunchDir(runDir, name, uid string) string {
	return filepath.Join(runDir, "seats", name+"-"+uid)
}

// startSeat prepares the seat's launch directory and starts its process
// in a pty, through the sandbox launcher when the manager has one, and
// records what the sandbox achieved. The directory is removed once the
// process has exited. A sandbox that cannot be had never fails the start.
func (m *Manager) startSeat(ctx context.Context, s *Seat, p *Persona, args []string, cwd string) (*pty.Seat, error) {
	dir, err := m.prepare(s)
	if err != nil {
		return nil, err
	}
	base := m.seatEnv(s, p)
	hargs, henv, err := s.h.launch(launchCtx{p: p, dir: dir, exe: m.cotalBinary(), knobs: envNames(m.seatKnobs(s)), environ: base})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	path, args := s.setupArgs(p.Path, append(append(slices.Clone(s.argvPre), hargs...), args...))
	lp := *p
	lp.Path = path
	p = &lp
	env := withCotalOnPath(append(base, henv...), m.cotalBinary())
	if m.custody() {
		proc, err := m.startKept(ctx, s, p, args, env, cwd)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		s.mu.Lock()
		sb := s.sandbox
		s.mu.Unlock()
		if !keptSandboxed(sb) {
			m.logf("seat %s runs %s", s.name, sb)
		}
		return proc, nil // its directories go once its lifecycle is over (cleanCustody)
	}
	pty.KeepSpare() // this process starts its seats: keep an emulator built ahead
	var proc *pty.Seat
	rep := sandbox.Report{Mode: sandbox.None, Reason: "the manager has no launcher"}
	if m.opts.Launcher == "" {
		proc, err = pty.Start(ctx, pty.Config{Path: p.Path, Args: args, Dir: cwd, Env: env})
	} else {
		var path string
		if path, err = exec.LookPath(p.Path); err == nil {
			plan := sandbox.Plan{Launcher: m.opts.Launcher, Path: path, Argv0: p.Path, Args: args,
				NoNamespace: slices.Contains(m.opts.SandboxSkip, sandbox.Namespace)}
			rep, err = sandbox.Start(plan, reportWait, func(launcher string, largs []string, attr *syscall.SysProcAttr, report *os.File) error {
				var err error
				proc, err = pty.Start(ctx, pty.Config{Path: launcher, Args: largs, Dir: cwd, Env: env, SysProcAttr: attr, ExtraFiles: []*os.File{report}})
				return err
			})
		}
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	nested := m.nestedNote(s, p, rep.Sandboxed(), rep.Nested)
	s.mu.Lock()
	s.sandbox, s.nested, s.custodyMode = rep.String(), nested, CustodyLegacy
	s.mu.Unlock()
	if !rep.Sandboxed() {
		m.logf("seat %s runs %s", s.name, rep)
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		<-proc.Done()
		if err := os.RemoveAll(dir); err != nil {
			m.logf("seat %s: removing its launch directory: %v", s.name, err)
		}
	}()
	return proc, nil
}

// nestedNote says (and logs) why the seat's harness cannot run a sandbox
// of its own inside the seat's ("" when it can, or has none).
func (m *Manager) nestedNote(s *Seat, p *Persona, sandboxed bool, why string) string {
	if !s.h.nests() || !sandboxed || why == "" {
		return ""
	}
	n := p.Harness + "'s own sandbox (bwrap) cannot run in this seat: " + why
	m.logf("seat %s: %s", s.name, n)
	return n
}

// prepare makes the seat's launch directory (0700; the minter may have
// made it already, to write the creds there) and writes its launch
// material (0600).
func (m *Manager) prepare(s *Seat) (string, error) {
	var dir string
	var protect []string
	if m.opts.RunDir == "" {
		d, err := os.MkdirTemp("", "cotal-seat-")
		if err != nil {
			return "", err
		}
		dir = d
	} else {
		dir = LaunchDir(m.opts.RunDir, s.name, s.uid)
		if err := os.MkdirAll(m.opts.RunDir, 0o700); err != nil {
			return "", err
		}
		for _, d := range []string{m.opts.RunDir, filepath.Dir(dir), dir} {
			if err := privateDir(d); err != nil {
				return "", err
			}
		}
		protect = []string{filepath.Dir(dir), keeper.Root(m.opts.RunDir), ControlDir(m.opts.RunDir)}
		for _, d := range protect[1:] {
			if err := privateDir(d); err != nil {
				return "", err
			}
		}
	}
	s.launchDir = dir
	mat := sandbox.Material{
		Creds: s.creds, URL: m.opts.URL, Space: m.opts.Space, Name: s.name, ID: s.id.ID(),
		LifecycleUID: s.uid, ManagerInstance: m.iid,
		Dir: dir, Protect: append(slices.Clone(m.opts.Protect), protect...), Skip: m.opts.SandboxSkip,
	}
	if err := sandbox.WriteMaterial(filepath.Join(dir, materialFile), mat); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("writing the seat's launch material: %w", err)
	}
	return dir, nil
}

// privateDir makes dir if needed and leaves it a real directory, 0700.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return os.Chmod(dir, 0o700)
}
