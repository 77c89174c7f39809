package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyOrAmbiguousBodiesAreRefusedBeforeConnecting: no mesh runs, so a
// refusal that names the body (not the missing mesh) shows nothing was
// about to be sent. An empty post used to be sent as an empty message.
func TestEmptyOrAmbiguousBodiesAreRefusedBeforeConnecting(t *testing.T) {
	c := newCLI(t, "bodies")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n\t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	body := filepath.Join(dir, "body")
	if err := os.WriteFile(body, []byte("hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"empty post", "", []string{"send", "msg", "team", ""}, "send msg: the message is empty; nothing was sent"},
		{"blank post", "", []string{"send", "msg", "team", "  ", "\t"}, "send msg: the message is empty"},
		{"blank dm", "", []string{"send", "dm", "bob", " "}, "send dm: the message is empty"},
		{"blank ask", "", []string{"send", "ask", "reviewer", "\n"}, "send ask: the message is empty"},
		{"blank stdin", " \n\n", []string{"send", "msg", "team", "-"}, "send msg: the message from standard input is empty"},
		{"blank file", "", []string{"send", "dm", "bob", "--file", empty}, "the message from " + empty + " is empty"},
		{"stdin and file", "x", []string{"send", "msg", "team", "-", "--file", body}, "--file or -, not both"},
		{"dash and words", "x", []string{"send", "msg", "team", "-", "more"}, "- reads the message from standard input and takes no other words"},
		{"file and words", "", []string{"send", "msg", "team", "hello", "--file", body}, `drop the words after the target ("hello")`},
		{"file missing", "", []string{"send", "msg", "team", "--file", filepath.Join(dir, "nope")}, "--file " + filepath.Join(dir, "nope") + ": no such file"},
		{"file is a dir", "", []string{"send", "msg", "team", "--file", dir}, "--file " + dir + ": is a directory"},
		{"no text", "", []string{"send", "ask", "reviewer"}, "send ask: missing <text>"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		g := &globals{stdin: strings.NewReader(tc.stdin), stdout: &out, stderr: &errb}
		code := execute(g, append(tc.args, "--space", c.paths.Space, "--store-dir", c.paths.StoreDir))
		if code != exitUsage || out.Len() != 0 || !strings.Contains(errb.String(), tc.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%s: cotal %q: exit %d\nstdout %q\nstderr %q\nwant exit 2 and one line saying %q", tc.name, tc.args, code, out.String(), errb.String(), tc.want)
		}
	}
}
