package cliargs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
)

// TestMintedCredsNamesOnlyWhatTheSpaceMinted: a bare name stands for the
// credential mint kept under the store; a file here, or a path, names
// itself; a name minted nothing for is bad input naming the space.
func TestMintedCredsNamesOnlyWhatTheSpaceMinted(t *testing.T) {
	p := config.Paths{Space: "alpha", StoreDir: t.TempDir()}
	if err := os.MkdirAll(p.CredsDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(p.CredsDir(), "alice.creds")
	if err := os.WriteFile(kept, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("local", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	resolved := 0
	paths := func() (config.Paths, error) { resolved++; return p, nil }
	for _, c := range []struct{ name, want, err string }{
		{"alice", kept, ""},
		{"local", "local", ""},
		{"./x/y.creds", "./x/y.creds", ""},
		{"bob", "bob", "--creds bob: no such file here, and space alpha has no credential minted for bob"},
	} {
		got, err := cliargs.MintedCreds(c.name, paths)
		if got != c.want || (c.err == "") != (err == nil) || err != nil && (!strings.Contains(err.Error(), c.err) || !cliargs.IsUsage(err)) {
			t.Errorf("MintedCreds(%q) = %q, %v; want %q, %q", c.name, got, err, c.want, c.err)
		}
	}
	if resolved != 2 {
		t.Errorf("the space was resolved %d times, want 2 (only for bare names with no file here)", resolved)
	}
}

// TestNamedCredsSaysHowTheFileWasGiven: an unusable creds file is bad
// input naming the flag or the variable; any other error passes as is.
func TestNamedCredsSaysHowTheFileWasGiven(t *testing.T) {
	ce := &config.CredsError{Path: "/x.creds", Problem: "no such file"}
	if err := cliargs.NamedCreds(ce, "--creds"); !cliargs.IsUsage(err) || err.Error() != "--creds /x.creds: no such file" {
		t.Errorf("--creds: %v", err)
	}
	if err := cliargs.NamedCreds(ce, "COTAL_CREDS="); err.Error() != "COTAL_CREDS=/x.creds: no such file" {
		t.Errorf("COTAL_CREDS=: %v", err)
	}
	other := errors.New("boom")
	if err := cliargs.NamedCreds(other, "--creds"); err != other || cliargs.NamedCreds(nil, "--creds") != nil {
		t.Errorf("other errors: %v", err)
	}
}

// TestCheckCredsOnlyWhereACommandActsAsTheIdentity: a command that never
// acts as one (version, up, a shell's completion request, and what is
// under them) is not stopped by unusable creds, nor are they looked at;
// bare cotal and any other command are refused before anything runs,
// naming how the creds were given.
func TestCheckCredsOnlyWhereACommandActsAsTheIdentity(t *testing.T) {
	root := &cobra.Command{Use: "cotal"}
	root.PersistentFlags().String("creds", "", "")
	cmds := map[string]*cobra.Command{}
	for _, n := range []string{"version", "up", cobra.ShellCompRequestCmd, "send"} {
		cmds[n] = &cobra.Command{Use: n}
		root.AddCommand(cmds[n])
	}
	msg := &cobra.Command{Use: "msg"}
	cmds["send"].AddCommand(msg)
	missing := filepath.Join(t.TempDir(), "missing.creds")
	paths := func() (config.Paths, error) {
		t.Fatal("a path is no bare name: the space is not resolved")
		return config.Paths{}, nil
	}
	for _, cmd := range []*cobra.Command{cmds["version"], cmds["up"], cmds[cobra.ShellCompRequestCmd]} {
		creds := missing
		if cliargs.TakesCreds(cmd) || cliargs.CheckCreds(cmd, &creds, paths) != nil {
			t.Errorf("%s acts as the identity in --creds", cmd.Name())
		}
	}
	for _, cmd := range []*cobra.Command{root, cmds["send"], msg} {
		creds := missing
		err := cliargs.CheckCreds(cmd, &creds, paths)
		if !cliargs.TakesCreds(cmd) || !cliargs.IsUsage(err) || !strings.HasPrefix(err.Error(), "COTAL_CREDS="+missing+": no such file") {
			t.Errorf("%s with unusable creds: %v, want bad input naming COTAL_CREDS=", cmd.CommandPath(), err)
		}
	}
	if err := root.PersistentFlags().Set("creds", missing); err != nil {
		t.Fatal(err)
	}
	creds := missing
	if err := cliargs.CheckCreds(msg, &creds, paths); err == nil || !strings.HasPrefix(err.Error(), "--creds "+missing+": ") {
		t.Errorf("send msg --creds %s: %v, want it named as --creds", missing, err)
	}
	if creds = ""; cliargs.CheckCreds(msg, &creds, paths) != nil {
		t.Error("no creds at all is refused")
	}
}
