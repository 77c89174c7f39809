package broker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func TestFlockHolder(t *testing.T) {
	const locks = `1: FLOCK  ADVISORY  WRITE 4242 fe:00:9980865 0 EOF
1: -> FLOCK  ADVISORY  WRITE 77 fe:00:9980865 0 EOF
2: FLOCK  ADVISORY  READ 99 fe:00:123 0 EOF
3: POSIX  ADVISORY  WRITE 55 fe:00:456 0 EOF
4: FLOCK  ADVISORY  WRITE 66 103:02:9980865 0 EOF
`
	dev := func(major, minor uint64) uint64 { return major<<8 | minor }
	for _, c := range []struct {
		name     string
		dev, ino uint64
		pid      int
		seen     bool
	}{
		{"the exclusive holder, not its waiter", dev(0xfe, 0), 9980865, 4242, true},
		{"only a shared (probe) lock", dev(0xfe, 0), 123, 0, true},
		{"a POSIX lock is not ours", dev(0xfe, 0), 456, 0, false},
		{"the same inode on another device", dev(0x103, 2), 9980865, 66, true},
		{"not listed", dev(0xfe, 0), 1, 0, false},
	} {
		pid, seen := flockHolder(locks, c.dev, c.ino)
		if pid != c.pid || seen != c.seen {
			t.Errorf("%s: got pid %d seen %v, want %d %v", c.name, pid, seen, c.pid, c.seen)
		}
	}
}

func TestLockHolderNamesTheHolderNotTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mesh.lock")
	if pid, held, err := LockHolder(path); err != nil || held || pid != 0 {
		t.Fatalf("no lock file: pid %d held %v err %v", pid, held, err)
	}
	l, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, held, err := LockHolder(filepath.Join(path, "under-a-file")); err != nil || held {
		t.Fatalf("a lock under a file: held %v err %v", held, err)
	}
	// The file lies about the holder; the kernel does not.
	if err := os.WriteFile(path, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pid, held, err := LockHolder(path)
	if err != nil || !held {
		t.Fatalf("held lock: held %v err %v", held, err)
	}
	if _, err := os.Stat("/proc/locks"); err == nil && pid != os.Getpid() {
		t.Errorf("holder pid %d, want this process %d (the file says 1)", pid, os.Getpid())
	}
	// Probing never takes the lock from its holder nor blocks a later one.
	if _, err := AcquireLock(path); err == nil {
		t.Fatal("a second AcquireLock succeeded while the lock was held")
	}
	l.Release()
	if _, held, err := LockHolder(path); err != nil || held {
		t.Fatalf("released lock: held %v err %v", held, err)
	}
	l2, err := AcquireLock(path)
	if err != nil {
		t.Fatalf("acquire after release and probe: %v", err)
	}
	l2.Release()
}

// flockHelperEnv makes this test binary a process that holds an exclusive
// flock(2) on the file it names, writing nothing into it, until killed: the
// other process of TestLockHolderOfAnotherProcess, with nothing to install.
const flockHelperEnv = "COTAL_TEST_FLOCK_HOLDER"

func TestMain(m *testing.M) {
	if path := os.Getenv(flockHelperEnv); path != "" {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err == nil {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		}
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		select {} // hold it until killed
	}
	os.Exit(m.Run())
}

func TestLockHolderOfAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mesh.lock")
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), flockHelperEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	pid, held, err := LockHolder(path)
	if err != nil || !held {
		t.Fatalf("held %v err %v", held, err)
	}
	if _, err := os.Stat("/proc/locks"); err == nil && pid != cmd.Process.Pid {
		t.Errorf("holder pid %d, want the other process's %d, not the %d the file names", pid, cmd.Process.Pid, os.Getpid())
	}
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
}
