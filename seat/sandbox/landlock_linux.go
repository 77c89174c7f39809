package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Filesystem rights the rulesets handle: every right go-landlock knows,
// cut down to the kernel's by best effort.
const (
	allFS  landlock.AccessFSSet = 1<<17 - 1
	fileFS landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
		ll.AccessFSTruncate | ll.AccessFSIoctlDev
	readDir landlock.AccessFSSet = ll.AccessFSReadDir
)

var rulesetConfig = landlock.Config{HandledAccessFS: allFS}.BestEffort()

// ABI is the kernel's Landlock ABI version, 0 when it has none.
func ABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// unavailable says why no ruleset could be made.
func unavailable() error {
	if v := ABI(); v < 2 {
		if v == 0 {
			return errors.New("this kernel has no Landlock")
		}
		return fmt.Errorf("this kernel's Landlock (ABI %d) cannot allow renames across directories (needs ABI 2)", v)
	}
	return errors.New("no usable Landlock here")
}

// scopeRuleset grants every right everywhere. It filters no path: its
// point is the domain itself, since a process in a Landlock domain cannot
// ptrace, or open /proc/<pid>/root, cwd, fd, mem or environ of, any
// process outside it — the way around the namespace's covers.
func scopeRuleset() (int, uint32, error) {
	fd, flags, err := rulesetConfig.NewRulesetFD(landlock.PathAccess(allFS, "/"))
	if err == nil && fd < 0 {
		err = unavailable()
	}
	return fd, flags, err
}

// pathRuleset grants every right on everything but the protected
// directories: on each sibling of each directory on the way to them
// (symlinks skipped: a rule would land on their target), on the launch
// directory, and the listing of the directories on the way.
func pathRuleset(c *confinement) (int, uint32, error) {
	way := c.pathDirs()
	skip := map[string]bool{}
	for _, d := range append(way, c.protect...) {
		skip[d] = true
	}
	var dirs, files []string
	for _, d := range way {
		ents, err := os.ReadDir(d)
		if err != nil {
			return -1, 0, fmt.Errorf("listing %s: %w", d, err)
		}
		for _, e := range ents {
			p := filepath.Join(d, e.Name())
			switch t := e.Type(); {
			case skip[p] || t&fs.ModeSymlink != 0:
			case t.IsDir():
				dirs = append(dirs, p)
			default:
				files = append(files, p)
			}
		}
	}
	rules := []landlock.Rule{
		landlock.PathAccess(readDir, way...),
		landlock.PathAccess(allFS, c.dir),
	}
	if len(dirs) > 0 {
		rules = append(rules, landlock.PathAccess(allFS, dirs...).IgnoreIfMissing())
	}
	if len(files) > 0 {
		rules = append(rules, landlock.PathAccess(fileFS, files...).IgnoreIfMissing())
	}
	fd, flags, err := rulesetConfig.NewRulesetFD(rules...)
	if err == nil && fd < 0 {
		err = unavailable()
	}
	return fd, flags, err
}

// enforce drops every capability, sets no_new_privs (so no setuid or file
// capability gives any back) and puts this thread in the ruleset's
// domain; the exec that follows takes all of it to the agent.
func enforce(fd int, flags uint32) error {
	defer unix.Close(fd)
	if err := dropCaps(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("entering the Landlock domain: %w", err)
	}
	return nil
}

// dropCaps clears this thread's ambient, inheritable, permitted and
// effective capabilities and, where it may, the bounding set. A root seat
// must lose the bounding set too, or exec would hand every capability back.
func dropCaps() error {
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	var bounding error
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the last capability
		}
		if err != nil && bounding == nil {
			bounding = err
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	if bounding != nil && (os.Getuid() == 0 || os.Geteuid() == 0) {
		return fmt.Errorf("the seat runs as root and its capability bounding set cannot be cleared: %w", bounding)
	}
	return nil
}
