package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAClientWaitsForAStartingMeshToSayWhereItListens: between taking its
// store lock and writing broker.json a mesh is starting; a command run in
// that moment (a second dashboard opened at once) waits for the file
// instead of failing with "broker.json is still the one of an earlier run".
func TestAClientWaitsForAStartingMeshToSayWhereItListens(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	record := filepath.Join(home, "spaces", "default", "broker.json")
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	// As if the mesh had not written it yet.
	if err := os.Remove(record); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out, errOut string
		code        int
		took        time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		out, errOut, code := runCotal(t, home, "roster", "--json")
		done <- result{out, errOut, code, time.Since(start)}
	}()
	const gap = 700 * time.Millisecond
	select {
	case r := <-done:
		t.Fatalf("roster did not wait for broker.json: exit %d after %s\n%s%s", r.code, r.took, r.out, r.errOut)
	case <-time.After(gap):
	}
	if err := os.WriteFile(record, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 0 || !strings.HasPrefix(strings.TrimSpace(r.out), "{") || r.took < gap {
		t.Fatalf("roster once broker.json was back: exit %d after %s\n%s%s", r.code, r.took, r.out, r.errOut)
	}
}
