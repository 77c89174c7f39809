package host

import (
	"fmt"
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
	said := []string{"took back 2 seat(s) from their keepers: a, b", "seat c was lost (2026-12-07 10:00:00): its keeper\nwas gone"}
	sayReady(f, said)
	got, ok := hearReady(pr)
	want := []string{said[0], "seat c was lost (2026-12-07 10:00:00): its keeper was gone"}
	if !ok || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("the other end heard %q (word %v), want the word then %q", got, ok, want)
	}
}

// TestHearReadyWantsTheWord: a pipe that ends, or says something else,
// is not a ready child.
func TestHearReadyWantsTheWord(t *testing.T) {
	for _, said := range []string{"", "rea", "steady\n", "READY\n"} {
		if lines, ok := hearReady(strings.NewReader(said)); ok {
			t.Errorf("%q was heard as ready (%q)", said, lines)
		}
	}
	if lines, ok := hearReady(strings.NewReader(readyWord)); !ok || len(lines) != 0 {
		t.Errorf("the word alone: %q %v; want ready with nothing to say", lines, ok)
	}
}
