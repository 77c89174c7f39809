package apply

import (
	"errors"
	"testing"

	"github.com/cotal-go/cotal/config"
)

// Two applies to one space never run at once; the second is told why.
func TestOneApplyAtATime(t *testing.T) {
	p := config.Paths{Space: "s", StoreDir: t.TempDir()}
	unlock, err := lock(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock(p); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second apply while one runs: %v, want ErrBusy", err)
	}
	unlock()
	again, err := lock(p)
	if err != nil {
		t.Fatalf("after the first ended: %v", err)
	}
	again()
}
