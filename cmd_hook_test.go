package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookNeverBreaksItsHarness: whatever is wrong (no seat, no mesh, a
// bad creds file, input that is not JSON, no event), `cotal hook` prints
// nothing on stdout and exits 0, saying why on stderr.
func TestHookNeverBreaksItsHarness(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, stdin string
		env         map[string]string
		want        string
	}{
		{"outside a seat", `{"hook_event_name":"Stop"}`, nil, "not inside a seat"},
		{"not json", `{"hook_event`, map[string]string{"COTAL_MANAGER_INSTANCE": "x", "COTAL_CREDS": "/nonexistent"}, "not JSON"},
		{"bad creds", `{}`, map[string]string{"COTAL_MANAGER_INSTANCE": "x", "COTAL_CREDS": filepath.Join(dir, "none.creds")}, "none.creds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("COTAL_MANAGER_INSTANCE", "")
			t.Setenv("COTAL_CREDS", "")
			t.Setenv("COTAL_HOME", dir)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out, errb bytes.Buffer
			g := &globals{stdin: strings.NewReader(tc.stdin), stdout: &out, stderr: &errb}
			if code := execute(g, []string{"hook", "Stop"}); code != exitOK || out.Len() != 0 {
				t.Fatalf("cotal hook Stop: exit %d, stdout %q, want 0 and nothing", code, out.String())
			}
			if !strings.Contains(errb.String(), tc.want) || !strings.HasPrefix(errb.String(), "cotal hook Stop: ") {
				t.Fatalf("stderr %q, want it to say %q", errb.String(), tc.want)
			}
		})
	}
}

// TestHookStreamFailsAtOnceOutsideASeat: `cotal hook --stream` that cannot
// act for a seat exits 1 at once, saying why, so that its plugin goes back
// to a hook per event; an event beside --stream, or neither, is bad input.
func TestHookStreamFailsAtOnceOutsideASeat(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("COTAL_HOME", dir)
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"outside a seat", map[string]string{"COTAL_MANAGER_INSTANCE": "", "COTAL_CREDS": ""}, "not inside a seat"},
		{"bad creds", map[string]string{"COTAL_MANAGER_INSTANCE": "x", "COTAL_CREDS": filepath.Join(dir, "none.creds")}, "none.creds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out, errb bytes.Buffer
			g := &globals{stdin: strings.NewReader(`{"id":1,"event":"Idle","input":{}}` + "\n"), stdout: &out, stderr: &errb}
			if code := execute(g, []string{"hook", "--stream"}); code != exitFail || out.Len() != 0 {
				t.Fatalf("cotal hook --stream: exit %d, stdout %q, want 1 and nothing", code, out.String())
			}
			if !strings.Contains(errb.String(), tc.want) || !strings.HasPrefix(errb.String(), "cotal hook --stream: ") {
				t.Fatalf("stderr %q, want it to say %q", errb.String(), tc.want)
			}
		})
	}
	for _, args := range [][]string{{"hook", "--stream", "Stop"}, {"hook"}} {
		var out, errb bytes.Buffer
		g := &globals{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
		if code := execute(g, args); code != exitUsage {
			t.Errorf("cotal %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), code, exitUsage, errb.String())
		}
	}
}
