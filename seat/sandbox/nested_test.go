//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cotal-go/cotal/seat/sandbox"
)

// A harness's own sandbox (Codex's bwrap) makes a user namespace and a
// mount namespace inside the seat. The seat must be able to, and must
// find the covers over the store still in place there, whatever it
// mounts.

// envNested makes this test binary, started inside a seat, the nested
// sandbox: "outer" starts "inner" in a new user and mount namespace, as
// bwrap does; "inner" tries to get under the covers.
const (
	envNested        = "COTAL_SANDBOX_TEST_NESTED"
	envNestedStore   = "COTAL_SANDBOX_TEST_STORE"
	envNestedProtect = "COTAL_SANDBOX_TEST_PROTECT"
)

// nestedMain is the nested sandbox's side of the test; it never returns.
func nestedMain(mode string) {
	switch mode {
	case "outer":
		exe, _ := os.Executable()
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), envNested+"=inner")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
		}
		if err := cmd.Run(); err != nil {
			fmt.Printf("NESTED refused: %v\n", err)
		}
		os.Exit(0)
	case "inner":
		nestedInner()
		os.Exit(0)
	}
	os.Exit(2)
}

// nestedInner runs as root of its own user namespace, with every
// capability there, in a mount namespace copied from the seat's: it tries
// to take the covers off the protected directories, or to see beneath
// them through a bind mount of what holds them, then reads the keys.
func nestedInner() {
	fmt.Printf("NESTED uid=%d\n", os.Getuid())
	store := os.Getenv(envNestedStore)
	protect := strings.Split(os.Getenv(envNestedProtect), ":")
	keys := filepath.Join(store, "auth", "keys.json")
	try := func(name string, err error) {
		if err == nil {
			fmt.Printf("LEAK nested-%s\n", name)
			return
		}
		fmt.Printf("DENY nested-%s (%v)\n", name, err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		fmt.Printf("NESTED cannot mount: %v\n", err)
	}
	for _, p := range protect {
		try("umount-"+filepath.Base(p), unix.Unmount(p, unix.MNT_DETACH))
	}
	readable := func(path string) error {
		b, err := os.ReadFile(path)
		if err == nil && string(b) == "SIGNING-KEY" {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("read %q", b)
		}
		return err
	}
	for i, flags := range []uintptr{unix.MS_BIND, unix.MS_BIND | unix.MS_REC} {
		mnt, err := os.MkdirTemp(".", "bind-")
		if err != nil {
			fmt.Printf("NESTED no mount point: %v\n", err)
			continue
		}
		err = unix.Mount(store, mnt, "", flags, "")
		if err == nil {
			err = readable(filepath.Join(mnt, "auth", "keys.json"))
		}
		try(fmt.Sprintf("bind-%d", i), err)
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, store, unix.OPEN_TREE_CLONE)
	if err == nil {
		err = readable(fmt.Sprintf("/proc/self/fd/%d/auth/keys.json", fd))
	}
	try("open-tree", err)
	try("keys", readable(keys))
	fmt.Println("END-NESTED")
}

// TestNestedNamespacesKeepTheCovers: in namespace mode a seat may make a
// user and mount namespace of its own (Codex's bwrap does), as root of it
// with every capability there, and still cannot unmount the covers, bind
// what they hide elsewhere or read the keys. Where the launcher says the
// seat cannot nest, it cannot.
func TestNestedNamespacesKeepTheCovers(t *testing.T) {
	s := newStore(t, t.TempDir())
	exe, _ := os.Executable()
	script := fmt.Sprintf("%s=outer %s=%s %s=%s %s", envNested, envNestedStore, s.root, envNestedProtect,
		strings.Join([]string{s.auth, s.jetstream, s.seats}, ":"), exe)
	rep, lines := launch(t, s, t.TempDir(), nil, script)
	if rep.Mode != sandbox.Namespace {
		if strings.Contains(rep.Reason, "no mount namespace") {
			t.Skipf("this kernel refuses the seat a mount namespace: %s", rep)
		}
		t.Fatalf("report %s, want %s", rep, sandbox.Namespace)
	}
	text := strings.Join(lines, "\n")
	t.Logf("report %+v; the nested sandbox saw:\n%s", rep, text)
	if rep.Nested != "" {
		// The launcher says nesting cannot work here: it does not.
		if strings.Contains(text, "END-NESTED") && !strings.Contains(text, "NESTED cannot mount") {
			t.Fatalf("the report says the seat cannot nest (%s), but it mounted:\n%s", rep.Nested, text)
		}
		return
	}
	if !strings.Contains(text, "NESTED uid=0") || !strings.Contains(text, "END-NESTED") {
		t.Fatalf("the seat could not make a user and mount namespace of its own:\n%s", text)
	}
	if strings.Contains(text, "NESTED cannot mount") {
		t.Fatalf("inside its own namespaces the seat cannot mount (bwrap needs to):\n%s", text)
	}
	if strings.Contains(text, "LEAK") || !strings.Contains(text, "DENY nested-keys") || strings.Count(text, "DENY nested-umount") != 3 {
		t.Fatalf("the covers did not hold in the nested namespace:\n%s", text)
	}
}
