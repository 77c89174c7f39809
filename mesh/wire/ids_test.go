package wire_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

func TestNewLifecycleUID(t *testing.T) {
	shape := regexp.MustCompile(`^[a-z0-9]{26}$`)
	seen := map[string]bool{}
	counts := map[rune]int{}
	const n = 2000
	for range n {
		uid := wire.NewLifecycleUID()
		if !shape.MatchString(uid) {
			t.Fatalf("NewLifecycleUID() = %q, want 26 of [a-z0-9]", uid)
		}
		if !wire.ValidLifecycleUID(uid) {
			t.Fatalf("ValidLifecycleUID(%q) = false for a minted uid", uid)
		}
		if seen[uid] {
			t.Fatalf("NewLifecycleUID() repeated %q", uid)
		}
		seen[uid] = true
		for _, r := range uid {
			counts[r]++
		}
	}
	// 52 000 draws over 36 symbols: every symbol appears, and none wildly more than the rest.
	if len(counts) != 36 {
		t.Fatalf("saw %d distinct characters, want 36", len(counts))
	}
	mean := n * 26 / 36
	for r, c := range counts {
		if c < mean*8/10 || c > mean*12/10 {
			t.Errorf("character %q drawn %d times, mean %d: biased draw?", r, c, mean)
		}
	}
}

func TestValidLifecycleUID(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"26", strings.Repeat("a1", 13), true},
		{"32", strings.Repeat("z9", 16), true},
		{"25", strings.Repeat("a", 25), false},
		{"33", strings.Repeat("a", 33), false},
		{"uppercase", strings.Repeat("A", 26), false},
		{"dash", strings.Repeat("a", 25) + "-", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wire.ValidLifecycleUID(tt.in); got != tt.want {
				t.Errorf("ValidLifecycleUID(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestNewID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := wire.NewID()
		if !v4.MatchString(id) {
			t.Fatalf("NewID() = %q, want a UUID v4", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}
}
