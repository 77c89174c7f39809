package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is returned by Lock when another live process serves the space.
var ErrLocked = errors.New("space is locked by another process")

// LockError says which process holds the lock.
type LockError struct {
	Path string
	PID  int
}

func (e *LockError) Error() string {
	return fmt.Sprintf("%s is held by pid %d", e.Path, e.PID)
}

func (e *LockError) Unwrap() error { return ErrLocked }

// Lock is an exclusive flock on a space's mesh.lock. The kernel drops it
// when the holding process dies, so a lock left by a crash is recovered by
// the next Lock without any cleanup.
type Lock struct {
	f *os.File
}

// AcquireLock takes the lock at path without waiting. When a live process
// holds it the error is a *LockError naming that pid.
func AcquireLock(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockError{Path: path, PID: holderPID(f)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// LockHolder reports whether a process holds the lock at path, and which,
// without taking the lock or writing to its file: what says a space's
// mesh runs, whatever broker.json says. A missing file, or one that
// cannot exist (its directory is a file), is held by nobody. pid is 0 when
// the holder cannot be named.
func LockHolder(path string) (pid int, held bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("opening lock %s: %w", path, err)
	}
	defer f.Close()
	// A shared lock is refused exactly while another holds the exclusive
	// one; taken, it is dropped at once.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0, false, nil
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return 0, false, fmt.Errorf("probing lock %s: %w", path, err)
	}
	return holderPID(f), true, nil
}

// holderPID names the process holding f's file locked: the kernel's own
// record where it keeps one (/proc/locks on Linux), else the pid the holder
// wrote into the file. The file can name an earlier holder for the moment
// between a new holder's flock and its write, the kernel never; a file
// the kernel shows only shared (probe) locks on has no holder: 0.
func holderPID(f *os.File) int {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err == nil {
		if b, err := os.ReadFile("/proc/locks"); err == nil {
			if pid, seen := flockHolder(string(b), uint64(st.Dev), st.Ino); seen {
				return pid
			}
		}
	}
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid
}

// flockHolder finds the exclusive flock on the file dev/ino in the text of
// /proc/locks ("1: FLOCK  ADVISORY  WRITE 4242 fe:00:9980865 0 EOF"). seen
// says whether any lock on that file is listed; pid is the exclusive
// holder's, 0 when only shared locks are.
func flockHolder(locks string, dev, ino uint64) (pid int, seen bool) {
	major := (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)
	minor := dev&0xff | (dev>>12)&^uint64(0xff)
	for line := range strings.Lines(locks) {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" { // "->" marks a waiter, not a holder
			continue
		}
		id := strings.Split(f[5], ":")
		if len(id) != 3 {
			continue
		}
		ma, err1 := strconv.ParseUint(id[0], 16, 64)
		mi, err2 := strconv.ParseUint(id[1], 16, 64)
		in, err3 := strconv.ParseUint(id[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || ma != major || mi != minor || in != ino {
			continue
		}
		seen = true
		if f[3] == "WRITE" {
			if p, err := strconv.Atoi(f[4]); err == nil && p > 0 {
				return p, true
			}
		}
	}
	return 0, seen
}

// Release drops the lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// PIDAlive reports whether a process with pid exists.
func PIDAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie (exited, not yet reaped: PID 1 in a container may never
	// reap it) answers signal 0 but is gone.
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// storeLimit is the JetStream store limit: what the store already uses
// plus three quarters of the free space on its disk, so JetStream refuses
// writes before the disk fills instead of switching itself off.
func storeLimit(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	used, _ := DirSize(dir)
	limit := used + free/4*3
	if limit < 1<<20 {
		return 0, fmt.Errorf("only %d bytes free on the disk of %s", free, dir)
	}
	return limit, nil
}

// DirSize sums the sizes of the regular files under dir: the store usage
// `cotal status` reports.
func DirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file vanishing mid-walk is not an error here
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}

// AcquireLockPatiently is AcquireLock that, when the holder it finds is
// already dead, waits up to wait for the kernel to let the lock go (a
// killed holder's lock is released as it exits, not always by the time
// its pid stops answering).
func AcquireLockPatiently(path string, wait time.Duration) (*Lock, error) {
	deadline := time.Now().Add(wait)
	for {
		l, err := AcquireLock(path)
		var le *LockError
		if err == nil || !errors.As(err, &le) || PIDAlive(le.PID) || time.Now().After(deadline) {
			return l, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
