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
		b, _ := os.ReadFile(path)
		f.Close()
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
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
