package host

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestReadyPipeIsTakenOnceAndNotInherited: the pipe a background mesh is
// told to say ready on leaves its environment when the mesh takes it,
// and no program it starts (a seat) inherits the descriptor, while the
// word still reaches the other end.
func TestReadyPipeIsTakenOnceAndNotInherited(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	// As the child of Detach sees it: the write end on a descriptor
	// that is not closed on exec, named in the environment.
	fd, err := syscall.Dup(int(pw.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Setenv(readyEnv, fmt.Sprint(fd))
	f := readyPipe()
	if f == nil {
		t.Fatal("readyPipe found no pipe")
	}
	if v, ok := os.LookupEnv(readyEnv); ok {
		t.Fatalf("%s=%s is still in the environment after the pipe was taken", readyEnv, v)
	}
	if readyPipe() != nil {
		t.Fatal("the pipe was taken twice")
	}
	out, err := exec.Command("sh", "-c", fmt.Sprintf("env; test -e /proc/self/fd/%d && echo inherited fd %d; true", fd, fd)).CombinedOutput()
	if err != nil {
		t.Fatalf("sh: %v\n%s", err, out)
	}
	if strings.Contains(string(out), readyEnv) || strings.Contains(string(out), "inherited fd") {
		t.Fatalf("a program the mesh starts inherits the ready pipe:\n%s", out)
	}
	sayReady(f)
	b, err := io.ReadAll(pr)
	if err != nil || string(b) != readyWord {
		t.Fatalf("the other end read %q (%v), want %q then the end", b, err, readyWord)
	}
}
