package delivery_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/cotal-go/cotal/mesh/delivery"
)

func TestLeaseHolderGone(t *testing.T) {
	me, err := os.Hostname()
	if err != nil {
		t.Skip("no hostname:", err)
	}
	alive := func(pid int) bool { return pid == 42 }
	for _, c := range []struct {
		holder  string
		meshPID int
		gone    bool
	}{
		{"another-machine/7", 0, false},       // cannot be checked
		{"not-host-pid", 0, false},            // not a name it can read
		{fmt.Sprintf("%s/42", me), 0, false},  // runs
		{fmt.Sprintf("%s/43", me), 0, true},   // does not run
		{fmt.Sprintf("%s/42", me), 42, false}, // runs, and is the store's mesh
		{fmt.Sprintf("%s/42", me), 99, true},  // runs, but another mesh holds the store
	} {
		if got := (delivery.Lease{Holder: c.holder}).HolderGone(c.meshPID, alive); got != c.gone {
			t.Errorf("holder %q, mesh pid %d: gone %v, want %v", c.holder, c.meshPID, got, c.gone)
		}
	}
}
