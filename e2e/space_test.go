package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runAt runs cotal from dir with COTAL_HOME=home and no --space, so the
// space is resolved as a person in that folder would have it resolved.
func runAt(t *testing.T, home, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, cotalBin, args...)
	cmd.Env, cmd.Dir = cotalEnv(home), dir
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		t.Fatalf("cotal %s in %s: no exit within %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), dir, commandTimeout, out.String(), errb.String())
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("cotal %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// downAtCleanup stops space's mesh (and its seats) when t ends.
func downAtCleanup(t *testing.T, home, space string) {
	t.Cleanup(func() {
		if _, stderr, code := runCotal(t, home, "down", "--with-agents", "--space", space); code != 0 {
			t.Errorf("cleanup: down --space %s: exit %d %s", space, code, stderr)
		}
	})
}

// A mesh started in a folder before it had a .cotal/ keeps serving that
// folder once .cotal/agents is made there: the CLI there finds the running
// mesh instead of looking for one named after the folder. Two meshes for
// one folder make a bare command refuse and name both; with none running,
// the error names the space looked for and what runs elsewhere.
func TestOneMeshPerFolderWhateverTheOrder(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	downAtCleanup(t, home, "default")
	downAtCleanup(t, home, "proj") // only if the folder's name were wrongly taken
	if out, stderr, code := runAt(t, home, dir, "up", "--detach"); code != 0 || !strings.Contains(out, "mesh default up on") {
		t.Fatalf("up --detach in an empty folder: exit %d\n%s%s", code, out, stderr)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".cotal", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}

	out, stderr, code := runAt(t, home, dir, "roster")
	if code != 0 {
		t.Fatalf("roster after .cotal/agents was made: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runAt(t, home, dir, "status", "--json")
	var st status
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || st.Space != "default" || !st.Up {
		t.Fatalf("status --json in the folder: exit %d %v\n%s%s", code, err, out, stderr)
	}
	// Starting again there finds the running mesh: no second mesh.
	out, stderr, code = runAt(t, home, dir, "up", "--detach")
	if code != 0 || !strings.Contains(out, "mesh default already running") {
		t.Fatalf("up --detach again in the folder: exit %d\n%s%s", code, out, stderr)
	}
	out, _, _ = runAt(t, home, dir, "meshes", "--json")
	var rows []struct {
		Space, State, Folder string
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Space != "default" || rows[0].State != "running" {
		t.Fatalf("meshes --json: %v\n%s", err, out)
	}
	if want, _ := filepath.EvalSymlinks(dir); rows[0].Folder != want {
		t.Errorf("meshes --json: folder %q, want %q", rows[0].Folder, want)
	}

	// Pinned to another space, the error names the space and the mesh
	// that runs for this folder.
	_, stderr, code = runAt(t, home, dir, "roster", "--space", "nope")
	if code != 1 || !strings.Contains(stderr, "space nope") || !strings.Contains(stderr, "default") || !strings.Contains(stderr, "this folder") {
		t.Errorf("roster --space nope: exit %d %q; want exit 1 naming nope and default, running for this folder", code, stderr)
	}

	// A second mesh for the folder: a bare command cannot tell which.
	downAtCleanup(t, home, "other")
	if out, stderr, code := runAt(t, home, dir, "up", "--detach", "--space", "other"); code != 0 {
		t.Fatalf("up --detach --space other: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runAt(t, home, dir, "roster")
	if code != 2 || out != "" || !strings.Contains(stderr, "default") || !strings.Contains(stderr, "other") || !strings.Contains(stderr, "--space") {
		t.Errorf("roster with two meshes for the folder: exit %d\nstdout %q\nstderr %q; want exit 2 naming both and --space", code, out, stderr)
	}
	if _, stderr, code := runAt(t, home, dir, "roster", "--space", "other"); code != 0 {
		t.Errorf("roster --space other: exit %d %s", code, stderr)
	}

	// None for the folder, one elsewhere: the error names both spaces.
	for _, sp := range []string{"default", "other"} {
		if _, stderr, code := runAt(t, home, dir, "down", "--space", sp); code != 0 {
			t.Fatalf("down --space %s: exit %d %s", sp, code, stderr)
		}
	}
	far := t.TempDir()
	downAtCleanup(t, home, "far")
	if out, stderr, code := runAt(t, home, far, "up", "--detach", "--space", "far"); code != 0 {
		t.Fatalf("up --detach --space far: exit %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = runAt(t, home, dir, "roster")
	if code != 1 || !strings.Contains(stderr, "space proj") || !strings.Contains(stderr, "far") {
		t.Errorf("roster with no mesh for the folder: exit %d %q; want exit 1 naming proj and far", code, stderr)
	}
}

// Inside a command seat, `cotal` by name is the binary that runs the mesh,
// even when another `cotal` comes first on the PATH the mesh was started
// with, and it acts as the seat.
func TestCotalInsideASeatIsTheMeshBinary(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	decoy := t.TempDir()
	if err := os.WriteFile(filepath.Join(decoy, "cotal"), []byte("#!/bin/sh\necho decoy-cotal\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	downAtCleanup(t, home, "seatpath")
	up := exec.Command(cotalBin, "up", "--detach", "--space", "seatpath")
	up.Env, up.Dir = append(cotalEnv(home), "PATH="+decoy+string(os.PathListSeparator)+os.Getenv("PATH")), dir
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("up --detach with a decoy cotal on PATH: %v\n%s", err, out)
	}
	bob := mint(t, home, "bob", "--space", "seatpath")
	if out, stderr, code := runAt(t, home, dir, "spawn", "shell"); code != 0 || !strings.Contains(out, "ready: shell") {
		t.Fatalf("spawn shell: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := runAt(t, home, dir, "input", "shell", `echo "at[$(command -v cotal)]"; cotal send dm bob hi-from-seat`); code != 0 {
		t.Fatalf("input: exit %d %s", code, stderr)
	}
	waitFor(t, 15*time.Second, func() error {
		out, _, _ := runAt(t, home, dir, "screen", "shell")
		if !strings.Contains(out, "at["+cotalBin+"]") || !strings.Contains(out, "DM to bob") {
			return fmt.Errorf("the seat's screen does not show `cotal` resolving to %s and sending:\n%s", cotalBin, out)
		}
		return nil
	})
	out := mustCotal(t, home, "--creds", bob.Creds, "inbox")
	if !strings.Contains(out, "hi-from-seat") || !strings.Contains(out, "shell") {
		t.Errorf("bob's inbox does not hold the seat's DM from shell:\n%s", out)
	}
}

// `go run . up --detach` leaves a background mesh whose binary go run
// deletes as soon as the command returns; the mesh must still start seats,
// and `cotal` inside them must still be it. The binary is built where go
// run builds it ($WORK/b001/exe/cotal) and removed once up returns.
func TestADetachedMeshOutlivesTheBinaryGoRunBuilt(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	exe := filepath.Join(t.TempDir(), "go-build1234", "b001", "exe", "cotal")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(cotalBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	downAtCleanup(t, home, "gorun")
	// A parallel test's fork may still hold the copy open for writing for
	// a moment (exec then fails with "text file busy"): try again until no
	// fork does.
	var out []byte
	waitFor(t, 10*time.Second, func() error {
		up := exec.Command(exe, "up", "--detach", "--space", "gorun")
		up.Env, up.Dir = cotalEnv(home), dir
		out, err = up.CombinedOutput()
		if errors.Is(err, syscall.ETXTBSY) {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("up --detach: %v\n%s", err, out)
	}
	if err := os.RemoveAll(filepath.Join(filepath.Dir(exe), "..", "..")); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runAt(t, home, dir, "spawn", "shell"); code != 0 || !strings.Contains(out, "ready: shell") {
		t.Fatalf("spawn once go run's binary is gone: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := runAt(t, home, dir, "input", "shell", `cotal roster >/dev/null && echo roster-ok-$((6*7))`); code != 0 {
		t.Fatalf("input: exit %d %s", code, stderr)
	}
	waitFor(t, 15*time.Second, func() error {
		out, _, _ := runAt(t, home, dir, "screen", "shell")
		if !strings.Contains(out, "roster-ok-42") {
			return fmt.Errorf("cotal in the seat did not run:\n%s", out)
		}
		return nil
	})
}
