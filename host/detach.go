package host

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cotal-go/cotal/config"
)

// DetachConfig says how Detach starts a background mesh.
type DetachConfig struct {
	Paths   config.Paths
	Args    []string      // the arguments that make this executable run the mesh in the foreground
	Env     []string      // added to this process's environment for the child
	Timeout time.Duration // how long the child has to be ready
	Slow    func(pid int) // told once when readiness takes over 2 s
}

// ExitedError is returned by Detach when the background mesh exits before
// it is ready; Log holds what it wrote to the space's log meanwhile.
type ExitedError struct {
	Err     error // how it exited (nil: status 0)
	LogFile string
	Log     string // its last lines, indented
}

func (e *ExitedError) Error() string {
	return fmt.Sprintf("background mesh exited before it was ready (%v); its log %s says:\n%s", e.Err, e.LogFile, e.Log)
}

func (e *ExitedError) Unwrap() error { return e.Err }

// NotReadyError is returned by Detach when the background mesh is neither
// ready nor gone after the timeout. It is left running.
type NotReadyError struct {
	PID     int
	After   time.Duration
	LogFile string
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("background mesh (pid %d) not ready after %s; see %s", e.PID, e.After, e.LogFile)
}

// Detached is what Detach returns of a background mesh that is ready: its
// broker.json, and what its start made of the seats its keepers held,
// said on the ready pipe (Said false: readiness was seen in broker.json
// alone, and Custody is unknown).
type Detached struct {
	config.BrokerRecord
	Said    bool
	Custody []string // seat.Custody's lines; empty when there was nothing to say
}

// Detach starts the space's mesh as a background process of this
// executable in its own session, its output appended to the space's
// mesh.log, and waits until it is ready (its broker.json is written),
// exits, or the timeout passes. It returns the child's broker.json and
// the custody lines it said on the ready pipe (Detached). When a
// process already runs the space, before or by a race the child lost, the
// error is an *AlreadyRunningError.
func Detach(ctx context.Context, c DetachConfig) (Detached, error) {
	p := c.Paths
	if err := config.EnsureDir(p.StoreDir, 0o700); err != nil {
		return Detached{}, err
	}
	if s, err := Probe(p); err != nil {
		return Detached{}, err
	} else if s.Running {
		return Detached{}, alreadyRunning(s)
	}
	exe, err := childExecutable(p)
	if err != nil {
		return Detached{}, err
	}
	logf, err := os.OpenFile(p.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return Detached{}, fmt.Errorf("opening log %s: %w", p.LogFile(), err)
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, io.SeekEnd)
	// The child says it is ready on a pipe (readyEnv names its end), so
	// this side hears it at once instead of at its next look at
	// broker.json, which it still takes every tick in case the pipe says
	// nothing.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Detached{}, fmt.Errorf("starting the background mesh: %w", err)
	}
	defer pr.Close()
	cmd := exec.Command(exe, c.Args...)
	cmd.Env = append(append(os.Environ(), c.Env...), readyEnv+"=3")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{pw}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return Detached{}, fmt.Errorf("starting the background mesh: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	said := make(chan []string, 1)
	go func() {
		if custody, ok := hearReady(pr); ok {
			said <- custody
		}
	}()
	ready := func() (Detached, bool) {
		// The child is ours: its pid in broker.json is no stale record
		// but the sign that it is ready.
		rec, err := config.ReadBrokerRecord(p)
		return Detached{BrokerRecord: rec}, err == nil && rec.PID == cmd.Process.Pid && rec.Stopped.IsZero()
	}

	start := time.Now()
	deadline := time.NewTimer(c.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	slow := c.Slow
	for {
		select {
		case err := <-exited:
			if s, perr := Probe(p); err == nil && perr == nil && s.Running {
				return Detached{}, alreadyRunning(s)
			}
			return Detached{}, &ExitedError{Err: err, LogFile: p.LogFile(), Log: logTail(p.LogFile(), logStart)}
		case <-deadline.C:
			return Detached{}, &NotReadyError{PID: cmd.Process.Pid, After: c.Timeout, LogFile: p.LogFile()}
		case <-ctx.Done():
			return Detached{}, fmt.Errorf("waiting for the background mesh (pid %d): %w", cmd.Process.Pid, ctx.Err())
		case custody := <-said:
			if rec, ok := ready(); ok {
				_ = cmd.Process.Release()
				rec.Said, rec.Custody = true, custody
				return rec, nil
			}
		case <-tick.C:
			if rec, ok := ready(); ok {
				_ = cmd.Process.Release()
				return rec, nil
			}
			if slow != nil && time.Since(start) > 2*time.Second {
				slow(cmd.Process.Pid)
				slow = nil
			}
		}
	}
}

// childExecutable is the program Detach starts: this executable, or a
// copy of it in the store dir (bin/cotal) when it is one `go run` built.
// go run deletes its binary as soon as the command returns, while the
// background mesh goes on launching every seat through it and putting it
// on the seats' PATH as `cotal`.
func childExecutable(p config.Paths) (string, error) {
	exe, err := os.Executable()
	if err != nil || !builtByGoRun(exe) {
		return exe, err
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(p.StoreDir, "bin", "cotal")
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", err
	}
	if err := config.WriteFileAtomic(dst, b, 0o755); err != nil {
		return "", fmt.Errorf("keeping a copy of the go run binary: %w", err)
	}
	return dst, nil
}

// builtByGoRun recognises a binary go run built by where it builds it:
// $WORK/b001/exe/<name>, $WORK being a go-build* temporary folder.
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	return filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(dir))), "go-build")
}

// logTail returns what the log gained since offset, trimmed to its last
// lines.
func logTail(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return "(no log)"
	}
	b = bytes.TrimSpace(b[offset:])
	lines := strings.Split(string(b), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// readyEnv names, in a background mesh's environment, the descriptor of
// the pipe on which it says readyWord once it is ready.
const (
	readyEnv  = "COTAL_READY_FD"
	readyWord = "ready\n"
)

// readyPipe is the pipe Detach gave this process to say it is ready on,
// nil when it gave none. It is taken once, at the start of a mesh: the
// variable leaves the environment and the descriptor is closed on exec,
// so no seat inherits either.
func readyPipe() *os.File {
	v, ok := os.LookupEnv(readyEnv)
	if !ok {
		return nil
	}
	_ = os.Unsetenv(readyEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "ready pipe")
}

// readyLimit bounds what hearReady takes from the pipe after the word.
const readyLimit = 64 << 10

// sayReady tells whoever started this mesh in the background that it is
// ready, once broker.json is written, and then what its start made of
// the seats its keepers held, a line each, so that side need not ask the
// mesh; closing the pipe ends the lines.
func sayReady(f *os.File, custody []string) {
	if f == nil {
		return
	}
	var b strings.Builder
	b.WriteString(readyWord)
	for _, l := range custody {
		b.WriteString(strings.ReplaceAll(l, "\n", " "))
		b.WriteByte('\n')
	}
	_, _ = f.WriteString(b.String())
	_ = f.Close()
}

// hearReady reads what sayReady says: false when the pipe ended without
// the word; else the custody lines that came after it.
func hearReady(r io.Reader) ([]string, bool) {
	var w [len(readyWord)]byte
	if _, err := io.ReadFull(r, w[:]); err != nil || string(w[:]) != readyWord {
		return nil, false
	}
	rest, _ := io.ReadAll(io.LimitReader(r, readyLimit))
	var lines []string
	for _, l := range strings.Split(string(rest), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, true
}
