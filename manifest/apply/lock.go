package apply

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cotal-go/cotal/config"
)

// ErrBusy is returned when another up -f or down -f is applying a manifest
// to the space.
var ErrBusy = errors.New("another `cotal up -f` or `cotal down -f` is applying a manifest to this space")

// lock holds the space's manifest lock (a flock under the store's auth
// folder) until the returned func is called, so two applies never
// interleave their spawns and records.
func lock(p config.Paths) (func(), error) {
	if err := config.EnsureDir(p.AuthDir(), 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(p.AuthDir(), "manifest.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (space %s): wait for it to end, then run yours again", ErrBusy, p.Space)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
