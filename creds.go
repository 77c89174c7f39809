package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/mesh/wire"
)

// maxCredsFile is far above any creds file mint writes (about 1 KiB).
const maxCredsFile = 64 << 10

// loadCreds reads and checks a creds file a person named (source says
// how: "--creds", "COTAL_CREDS="). Every way in that takes creds goes
// through it, so a wrong path is bad input, said the same way everywhere.
func loadCreds(path, source string) (wire.CredsInfo, error) {
	named := source + " " + path
	if strings.HasSuffix(source, "=") {
		named = source + path
	}
	bad := func(what string) error { return usagef("%s: %s", named, what) }
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return wire.CredsInfo{}, bad("no such file (`cotal mint <name>` writes one under the store; then --creds <name>)")
	case err != nil:
		return wire.CredsInfo{}, bad("cannot be read: " + describeOpenError(err))
	case fi.IsDir():
		return wire.CredsInfo{}, bad("is a directory, not a creds file")
	case !fi.Mode().IsRegular():
		return wire.CredsInfo{}, bad("is not a regular file, so not a creds file")
	case fi.Size() > maxCredsFile:
		return wire.CredsInfo{}, bad("is too large to be a creds file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return wire.CredsInfo{}, bad("cannot be read: " + describeOpenError(err))
	}
	info, err := wire.ParseCreds(b)
	if err != nil {
		if errors.Is(err, wire.ErrNotCreds) {
			return wire.CredsInfo{}, bad(err.Error())
		}
		return wire.CredsInfo{}, bad("not a cotal creds file: " + err.Error())
	}
	kp, err := jwt.ParseDecoratedNKey(b)
	if err != nil {
		return wire.CredsInfo{}, bad("not a creds file: its key does not parse (" + err.Error() + ")")
	}
	kp.Wipe()
	return info, nil
}

// credsSource says how the creds of cmd were named.
func credsSource(cmd *cobra.Command) string {
	if f := cmd.Flag("creds"); f != nil && f.Changed {
		return "--creds"
	}
	return "COTAL_CREDS="
}

// credsFree are the commands that never act as an identity, so a stale
// COTAL_CREDS does not stop them.
var credsFree = map[string]bool{"version": true, "completion": true, "help": true, "meshes": true, "use": true, "setup": true, "up": true}

// takesCreds reports whether cmd acts as the identity in --creds.
func takesCreds(cmd *cobra.Command) bool {
	top := cmd
	for top.HasParent() && top.Parent().HasParent() {
		top = top.Parent()
	}
	if !top.HasParent() {
		return true // bare cotal: the dashboard acts as the identity
	}
	name := top.Name()
	return !credsFree[name] && name != cobra.ShellCompRequestCmd && name != cobra.ShellCompNoDescRequestCmd
}

// checkCreds is every command's first step: creds that cannot be used are
// bad input before anything connects. A bare name that is no file here
// names the credential `cotal mint <name>` kept under the store.
func checkCreds(g *globals) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if g.creds == "" || !takesCreds(cmd) {
			return nil
		}
		if err := g.mintedCreds(); err != nil {
			return err
		}
		_, err := loadCreds(g.creds, credsSource(cmd))
		return err
	}
}

// mintedCreds turns --creds <name> into the path of the credential mint
// wrote for name under the space's store, when no file of that name is
// here: creds kept under the store are out of every seat's sight, and
// this is how a person names them.
func (g *globals) mintedCreds() error {
	name := g.creds
	if !wire.ValidToken(name) {
		return nil
	}
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	g.creds = ""
	_, p, _, err := g.paths()
	g.creds = name
	if err != nil {
		return err
	}
	path := filepath.Join(p.CredsDir(), name+".creds")
	if _, err := os.Stat(path); err != nil {
		return usagef("--creds %s: no such file here, and space %s has no credential minted for %s (`cotal mint %s` writes one)", name, p.Space, name, name)
	}
	g.creds = path
	return nil
}

// readsStorage reports whether this process's identity reads the space's
// streams itself: the local operator or an operator credential. An agent's
// or observer's JetStream request is dropped by the broker and waits out
// its deadline, so what only storage can say is not asked for them.
func (g *globals) readsStorage() bool {
	if g.creds == "" {
		return true
	}
	info, err := loadCreds(g.creds, "--creds")
	return err == nil && info.Profile == "operator"
}
