package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/internal/cliargs"
)

// TestEveryCommandRefusesUnusableCredsAlike walks every command that acts
// as an identity: a creds path that does not exist, is a directory or
// holds no creds is bad input naming the path and what is wrong. Before,
// each command met it its own way: exit 1 with "reading creds: open ...",
// or a connection error, or nothing until it connected.
func TestEveryCommandRefusesUnusableCredsAlike(t *testing.T) {
	c := newCLI(t, "creds")
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.creds")
	if err := os.WriteFile(garbage, []byte("-----BEGIN NATS USER JWT-----\nnot.a.jwt\n------END NATS USER JWT------\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		filepath.Join(dir, "missing.creds"): "no such file",
		dir:                                 "is a directory",
		garbage:                             "not a creds file",
	}
	var commands [][]string
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		// A harness's hook never fails its harness: it exits 0 whatever is
		// wrong (TestHookNeverBreaksItsHarness).
		if cmd.Runnable() && cmd.HasParent() && cliargs.TakesCreds(cmd) && !cmd.HasSubCommands() && cmd.Name() != "hook" {
			args := append([]string{}, path...)
			for range cliargs.Required(cmd.Use) {
				args = append(args, "x")
			}
			commands = append(commands, args)
		}
		for _, sub := range cmd.Commands() {
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(newRoot(c.globals()), nil)
	if len(commands) < 20 {
		t.Fatalf("only %d commands take creds: %v", len(commands), commands)
	}
	for _, args := range commands {
		for path, want := range bad {
			out, errOut, code := c.run(append(args, "--creds", path)...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, "--creds "+path+": "+want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("cotal %s --creds %s: exit %d\nstdout %q\nstderr %q\nwant exit 2 and one line saying %q", strings.Join(args, " "), path, code, out, errOut, want)
			}
		}
	}
	t.Setenv("COTAL_CREDS", garbage)
	if _, errOut, code := c.run("send", "msg", "team", "hi"); code != exitUsage || !strings.Contains(errOut, "COTAL_CREDS="+garbage+": not a creds file") {
		t.Errorf("COTAL_CREDS=%s send: exit %d, stderr %q; want exit 2 naming COTAL_CREDS", garbage, code, errOut)
	}
	// A command that never acts as an identity is not stopped by it.
	if out, errOut, code := c.run("version"); code != 0 || out == "" {
		t.Errorf("COTAL_CREDS=%s version: exit %d, stdout %q, stderr %q", garbage, code, out, errOut)
	}
}
