package cliargs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

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
