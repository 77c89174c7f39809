package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// reportFD is where the manager hands the launcher the report pipe.
const reportFD = 3

// launch confines this process as far as the kernel allows, tells the
// manager how far that was, and execs the agent. args are the namespace
// note the manager passes, the program's path, its argv[0] and arguments.
func launch(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "cotal: "+Arg+" is internal to the seat manager")
		return 2
	}
	// Never unlocked: capabilities and a Landlock domain belong to a
	// thread, and the exec below must happen on the one that holds them.
	runtime.LockOSThread()
	path, argv := args[1], args[2:]
	send(confine(args[0]))
	err := syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "cotal: starting %s: %v\n", path, err)
	return 127
}

// confine applies the strongest sandbox it can and says which.
func confine(note string) Report {
	m, err := ReadMaterial(os.Getenv(MaterialEnv))
	if err != nil {
		return unsandboxed("no launch material: %v", err)
	}
	c, err := resolve(m)
	if err != nil {
		return unsandboxed("%v", err)
	}
	if len(c.protect) == 0 {
		return unsandboxed("nothing to protect: no protected directory exists")
	}
	if err := c.cwdOutside(); err != nil {
		return unsandboxed("%v", err)
	}

	var why string
	entered := false // in a mount namespace of our own
	switch {
	case m.skips(Namespace):
		why = "mount namespace skipped by the manager's options"
	case !strings.HasPrefix(note, "ns:"):
		why = strings.TrimPrefix(note, "plain:")
	default:
		own, err := os.Readlink("/proc/self/ns/mnt")
		switch {
		case err != nil:
			why = "no mount namespace: " + err.Error()
		case own == strings.TrimPrefix(note, "ns:"):
			why = "no mount namespace: the launcher shares the manager's"
		default:
			entered = true
		}
	}
	if entered {
		// The namespace start raised CAP_SYS_ADMIN (in a user namespace)
		// for the mounts; whatever happens next, the agent never gets it.
		defer func() { _ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) }()
		if err := hide(c); err != nil {
			why = "no mount namespace: " + err.Error()
		} else {
			fd, flags, nested, err := scopeRuleset()
			var keep []uintptr
			if nested == "" && os.Geteuid() == 0 {
				// A root seat's own sandbox (bwrap) maps root into the
				// user namespace it makes, which takes CAP_SETFCAP.
				keep = []uintptr{capSetFCap}
			}
			if err == nil {
				err = enforce(fd, flags, keep...)
			}
			if err != nil {
				return unsandboxed("the store is hidden by a mount namespace, but other processes' /proc/<pid>/root still reach it: %v", err)
			}
			return Report{Mode: Namespace, Nested: nested}
		}
	}
	if m.skips(Landlock) {
		return unsandboxed("%s; Landlock path rules skipped by the manager's options", why)
	}
	if err := c.cold(); err != nil {
		return unsandboxed("%s; and Landlock path rules would break the seat: %v", why, err)
	}
	fd, flags, err := pathRuleset(c)
	if err == nil {
		err = enforce(fd, flags)
	}
	if err != nil {
		return unsandboxed("%s; Landlock: %v", why, err)
	}
	return Report{Mode: Landlock, Reason: why, Nested: "Landlock path rules forbid the mounts it makes"}
}

// send writes the report to the manager's pipe and closes it, so the
// agent never holds it.
func send(r Report) {
	var st unix.Stat_t
	if unix.Fstat(reportFD, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return // not started by a manager
	}
	b, _ := json.Marshal(r)
	_, _ = unix.Write(reportFD, b)
	_ = unix.Close(reportFD)
}

// confinement is a launch's paths, every one resolved through symlinks:
// Landlock rules and mounts act on the real directories.
type confinement struct {
	dir     string   // the seat's launch directory
	protect []string // existing protected directories, none inside another
	cwd     string
	home    string
	tmp     []string
}

func resolve(m Material) (*confinement, error) {
	c := &confinement{}
	var err error
	if c.dir, err = filepath.EvalSymlinks(m.Dir); err != nil {
		return nil, fmt.Errorf("launch directory: %w", err)
	}
	for _, p := range m.Protect {
		rp, err := filepath.EvalSymlinks(p)
		if errors.Is(err, os.ErrNotExist) {
			continue // nothing there to hide
		}
		if err != nil {
			return nil, fmt.Errorf("protected directory: %w", err)
		}
		if rp == "/" || rp == c.dir {
			return nil, fmt.Errorf("cannot protect %s: the seat needs it", rp)
		}
		c.protect = append(c.protect, rp)
	}
	c.protect = outermost(c.protect)
	if wd, err := os.Getwd(); err == nil {
		c.cwd, _ = filepath.EvalSymlinks(wd)
	}
	c.home = realOrEmpty(os.Getenv("HOME"))
	c.tmp = []string{realOrEmpty("/tmp"), realOrEmpty(os.Getenv("TMPDIR"))}
	return c, nil
}

func realOrEmpty(p string) string {
	if p == "" {
		return ""
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return r
}

// outermost drops duplicates and directories inside another of the list.
func outermost(dirs []string) []string {
	var out []string
	for i, d := range dirs {
		inner := false
		for j, o := range dirs {
			if i != j && within(d, o) && (d != o || j < i) {
				inner = true
				break
			}
		}
		if !inner {
			out = append(out, d)
		}
	}
	return out
}

// cwdOutside refuses a working directory inside a protected directory:
// the seat would keep a handle below the cover.
func (c *confinement) cwdOutside() error {
	for _, p := range c.protect {
		if c.cwd != "" && within(c.cwd, p) && !within(c.cwd, c.dir) {
			return fmt.Errorf("the seat's working directory %s is inside the protected %s", c.cwd, p)
		}
	}
	return nil
}

// hide covers each protected directory with an empty read-only tmpfs in
// this (private) mount namespace and binds the launch directory back in
// place; then it checks that the covers hold.
func hide(c *confinement) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	// Held before anything covers it: the bind source.
	keep, err := unix.Open(c.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the launch directory: %w", err)
	}
	defer unix.Close(keep)
	const cover = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	for _, p := range c.protect {
		if err := unix.Mount("tmpfs", p, "tmpfs", cover, "mode=0700,size=64k,nr_inodes=256"); err != nil {
			return fmt.Errorf("covering %s: %w", p, err)
		}
		if within(c.dir, p) {
			if err := os.MkdirAll(c.dir, 0o700); err != nil {
				return fmt.Errorf("making the launch directory's mount point: %w", err)
			}
			if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", keep), c.dir, "", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("binding the launch directory back: %w", err)
			}
		}
		if err := unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|cover, ""); err != nil {
			return fmt.Errorf("making the cover of %s read-only: %w", p, err)
		}
	}
	for _, p := range c.protect {
		ents, err := os.ReadDir(p)
		if err != nil {
			return fmt.Errorf("checking the cover of %s: %w", p, err)
		}
		way := ""
		if within(c.dir, p) {
			way, _, _ = strings.Cut(strings.TrimPrefix(c.dir[len(p):], "/"), "/")
		}
		for _, e := range ents {
			if e.Name() != way {
				return fmt.Errorf("the cover of %s still shows %s", p, e.Name())
			}
		}
	}
	if c.cwd != "" {
		// Through the new mounts, not the handle taken before them.
		_ = os.Chdir(c.cwd)
	}
	return nil
}

// cold refuses Landlock path rules where they would hurt the seat. Such
// rules hide a directory only by granting each sibling along the path to
// it; a file created later directly in a directory on that path is not
// among them and so is unreadable. That is fatal where agents create files:
// $HOME (~/.claude.json is rewritten by rename all the time), the temp
// directories, the working directory and its ancestors (project roots).
// "/" is the exception: hardly anything creates files directly in it.
func (c *confinement) cold() error {
	hot := map[string]string{}
	mark := func(p, why string) {
		if p != "" {
			if _, ok := hot[p]; !ok {
				hot[p] = why
			}
		}
	}
	mark(c.home, "$HOME")
	for _, t := range c.tmp {
		mark(t, "a temp directory")
	}
	mark(c.cwd, "the seat's working directory")
	for a := filepath.Dir(c.cwd); c.cwd != "" && a != "/"; a = filepath.Dir(a) {
		mark(a, "an ancestor of the seat's working directory")
	}
	delete(hot, "/")
	for _, d := range c.pathDirs() {
		if why, ok := hot[d]; ok {
			return fmt.Errorf("the store lies under %s (%s), where files created later would be unreadable", d, why)
		}
	}
	return nil
}

// pathDirs are the directories on the way to the protected ones: "/" and
// every strict ancestor of each, sorted.
func (c *confinement) pathDirs() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range c.protect {
		for a := filepath.Dir(p); ; a = filepath.Dir(a) {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
			if a == "/" {
				break
			}
		}
	}
	return out
}
