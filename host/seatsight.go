package host

import (
	"path/filepath"
	"strings"

	"github.com/cotal-go/cotal/config"
)

// SeatsCannotRead reports whether path lies in a folder every seat's
// sandbox hides (SeatProtect: the store's auth and JetStream folders).
func SeatsCannotRead(p config.Paths, path string) bool {
	at, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return false
	}
	for _, dir := range SeatProtect(p) {
		d, err := filepath.EvalSymlinks(dir)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(d, at); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}
