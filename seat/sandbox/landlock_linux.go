package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

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

// scopeABI is the first Landlock ABI that scopes a domain without
// handling any filesystem right.
const scopeABI = 6

// scopeRuleset makes the seat's Landlock domain in namespace mode. It
// filters no path: its point is the domain itself, since a process in a
// Landlock domain cannot ptrace, or open /proc/<pid>/root, cwd, fd, mem or
// environ of, any process outside it — the way around the namespace's
// covers. From ABI 6 the domain scopes signals only (the seat cannot signal
// a process outside it) and handles no filesystem right, so the seat may
// still make mount namespaces of its own, as a harness's sandbox (bwrap)
// does; nested says why it may not, "" when it may. Below ABI 6 the domain
// grants every filesystem right everywhere, and a domain that handles
// filesystem rights forbids every mount.
func scopeRuleset() (fd int, flags uint32, nested string, err error) {
	if ABI() >= scopeABI {
		fd, flags, err = landlock.Config{Scoped: ll.ScopeSignal}.NewRulesetFD()
		if err == nil && fd >= 0 {
			return fd, flags, "", nil
		}
		if err == nil {
			err = unavailable()
		}
		return -1, 0, "", err
	}
	fd, flags, err = rulesetConfig.NewRulesetFD(landlock.PathAccess(allFS, "/"))
	if err == nil && fd < 0 {
		err = unavailable()
	}
	return fd, flags, fmt.Sprintf("Landlock ABI %d cannot scope the seat without forbidding mounts (needs %d)", ABI(), scopeABI), err
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

// enforce drops every capability but keep, sets no_new_privs (so no
// setuid or file capability gives any back) and puts this thread in the
// ruleset's domain; the exec that follows takes all of it to the agent.
func enforce(fd int, flags uint32, keep ...uintptr) error {
	defer unix.Close(fd)
	if err := dropCaps(keep...); err != nil {
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

// capSetFCap is CAP_SETFCAP: since Linux 5.12 a user namespace may map
// uid 0 of its parent only if its creator held it.
const capSetFCap = 31

// dropCaps clears this thread's ambient and inheritable capabilities, its
// permitted and effective ones but keep, and, where it may, the bounding
// set but keep. A root seat must lose the bounding set too, or exec would
// hand every capability back; what it keeps, exec hands back to it (root's
// rule), and no_new_privs bounds it to that.
func dropCaps(keep ...uintptr) error {
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	var bounding error
	for c := 0; c < 64; c++ {
		if slices.Contains(keep, uintptr(c)) {
			continue
		}
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
	for _, c := range keep {
		data[c/32].Permitted |= 1 << (c % 32)
		data[c/32].Effective |= 1 << (c % 32)
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	if bounding != nil && (os.Getuid() == 0 || os.Geteuid() == 0) {
		return fmt.Errorf("the seat runs as root and its capability bounding set cannot be cleared: %w", bounding)
	}
	return nil
}
