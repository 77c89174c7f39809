package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoHome is returned when neither COTAL_HOME, XDG_DATA_HOME nor a home
// directory is available to hold cotal's data.
var ErrNoHome = errors.New("no data directory: set COTAL_HOME or HOME")

// DataDir returns the root of cotal's data: $COTAL_HOME, else
// $XDG_DATA_HOME/cotal, else ~/.local/share/cotal. It does not create it.
func DataDir() (string, error) {
	if d := os.Getenv("COTAL_HOME"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "cotal"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", ErrNoHome
	}
	return filepath.Join(home, ".local", "share", "cotal"), nil
}

// Paths names the files of one space. Every field is an absolute path.
type Paths struct {
	Space    string
	StoreDir string // JetStream store, keys, creds, broker.json, lock
}

// DefaultStoreDir is where a space's store lives unless --store-dir says otherwise.
func DefaultStoreDir(data, space string) string {
	return filepath.Join(data, "spaces", space)
}

// BrokerFile is the broker.json a running mesh writes for its clients.
func (p Paths) BrokerFile() string { return filepath.Join(p.StoreDir, "broker.json") }

// LockFile is held (flock) by the process serving the space.
func (p Paths) LockFile() string { return filepath.Join(p.StoreDir, "mesh.lock") }

// LogFile receives a detached mesh's output.
func (p Paths) LogFile() string { return filepath.Join(p.StoreDir, "mesh.log") }

// JetStreamDir is the JetStream file store.
func (p Paths) JetStreamDir() string { return filepath.Join(p.StoreDir, "jetstream") }

// AuthDir holds the operator and account keys and minted creds (0700).
func (p Paths) AuthDir() string { return filepath.Join(p.StoreDir, "auth") }

// OperatorCreds is the local user's CLI credential, minted on every `up`.
func (p Paths) OperatorCreds() string { return filepath.Join(p.AuthDir(), "operator.creds") }

// CredsDir holds creds minted by `cotal mint` without --out.
func (p Paths) CredsDir() string { return filepath.Join(p.AuthDir(), "creds") }

// EnsureDir creates dir with mode perm and checks it is writable, so an
// unusable store is refused up front with its path named.
func EnsureDir(dir string, perm os.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return fmt.Errorf("store dir %s is not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// WriteFileAtomic writes data to path through a temp file and a rename, with
// mode perm, so a reader never sees half a file and a secret is never
// world-readable even for a moment.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// HandledFile is where one-shot inbox reads of an identity lifecycle keep
// what they handed over, "" when the store is not on this machine: the
// broker confirms an ack before its disk has it, so after a crash of the
// mesh it may hand a read copy out again, and the next read acks it
// silently instead (mesh.Endpoint.Handled and AssumeHandled).
func (p Paths) HandledFile(principalID, uid string) string {
	if p.StoreDir == "" {
		return ""
	}
	if _, err := os.Stat(p.StoreDir); err != nil {
		return ""
	}
	return filepath.Join(p.StoreDir, "handled", principalID+"."+uid+".json")
}

// ReadHandled is what a HandledFile keeps; nothing when it is missing or
// unreadable (the worst case is a repeat after a crash).
func ReadHandled(path string) []string {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var keys []string
	if json.Unmarshal(b, &keys) != nil {
		return nil
	}
	return keys
}

// WriteHandled replaces a HandledFile with keys, private to the user.
func WriteHandled(path string, keys []string) error {
	if path == "" {
		return nil
	}
	b, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	if err := EnsureDir(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(path, b, 0o600)
}
