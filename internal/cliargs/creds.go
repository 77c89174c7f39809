package cliargs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// NamedCreds is err, or, when it is a creds file that cannot be used (a
// *config.CredsError), bad input naming how the file was given: source
// is "--creds" or "COTAL_CREDS=".
func NamedCreds(err error, source string) error {
	var ce *config.CredsError
	if !errors.As(err, &ce) {
		return err
	}
	named := source + " " + ce.Path
	if strings.HasSuffix(source, "=") {
		named = source + ce.Path
	}
	return Usagef("%s: %s", named, ce.Problem)
}

// MintedCreds is the creds file --creds name stands for. A bare name that
// is no file here names the credential `cotal mint <name>` kept under the
// space's store (paths resolves the space), out of every seat's sight;
// anything else names itself. A name the space minted nothing for is bad
// input.
func MintedCreds(name string, paths func() (config.Paths, error)) (string, error) {
	if !wire.ValidToken(name) {
		return name, nil
	}
	if _, err := os.Stat(name); err == nil {
		return name, nil
	}
	p, err := paths()
	if err != nil {
		return name, err
	}
	path := filepath.Join(p.CredsDir(), name+".creds")
	if _, err := os.Stat(path); err != nil {
		return name, Usagef("--creds %s: no such file here, and space %s has no credential minted for %s (`cotal mint %s` writes one)", name, p.Space, name, name)
	}
	return path, nil
}

// LoadCreds reads and checks a creds file a person named (source says
// how: "--creds", "COTAL_CREDS="): one that cannot be used is bad input.
func LoadCreds(path, source string) (wire.CredsInfo, error) {
	info, err := config.LoadCreds(path)
	return info, NamedCreds(err, source)
}

// CredsSource says how the creds of cmd were named.
func CredsSource(cmd *cobra.Command) string {
	if f := cmd.Flag("creds"); f != nil && f.Changed {
		return "--creds"
	}
	return "COTAL_CREDS="
}

// credsFree are the commands that never act as an identity, so a stale
// COTAL_CREDS does not stop them.
var credsFree = map[string]bool{"version": true, "completion": true, "help": true, "meshes": true, "use": true, "setup": true, "up": true,
	cobra.ShellCompRequestCmd: true, cobra.ShellCompNoDescRequestCmd: true}

// TakesCreds reports whether cmd acts as the identity in --creds: every
// command but those that never act as one, and bare cotal (the dashboard)
// too.
func TakesCreds(cmd *cobra.Command) bool {
	top := cmd
	for top.HasParent() && top.Parent().HasParent() {
		top = top.Parent()
	}
	return !top.HasParent() || !credsFree[top.Name()]
}

// CheckCreds is every command's first step: creds that cannot be used are
// bad input before anything connects. A bare name that is no file here
// names the credential `cotal mint <name>` kept under the store
// (MintedCreds; paths resolves the space as if no --creds named it), and
// *creds becomes that file.
func CheckCreds(cmd *cobra.Command, creds *string, paths func() (config.Paths, error)) error {
	if *creds == "" || !TakesCreds(cmd) {
		return nil
	}
	path, err := MintedCreds(*creds, paths)
	if err != nil {
		return err
	}
	*creds = path
	_, err = LoadCreds(path, CredsSource(cmd))
	return err
}
