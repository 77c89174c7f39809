package typo_test

import (
	"slices"
	"testing"

	"github.com/cotal-go/cotal/internal/typo"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"team", "team", 0},
		{"Team", "team", 0}, // case is no typo
		{"team", "tema", 1}, // a swap of neighbours is one
		{"allowPublish", "alowPublish", 1},
		{"allowPublish", "allowPublsh", 1},
		{"allowPublish", "allowPublisj", 1},
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment: no edit of a swapped pair
		{"ünïcode", "unicode", 2},
		{"reviewer", "reveiwer", 1},
	} {
		if got := typo.Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := typo.Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestClose(t *testing.T) {
	names := []string{"team", "tean", "ops", "team.backend", "teams", "team", "marketing"}
	if got, want := typo.Close("team", names, 2, false), []string{"teams", "tean"}; !slices.Equal(got, want) {
		t.Errorf("Close without prefixes = %v, want %v", got, want)
	}
	if got, want := typo.Close("team", names, 2, true), []string{"team.backend", "teams", "tean"}; !slices.Equal(got, want) {
		t.Errorf("Close with prefixes = %v, want %v", got, want)
	}
	if got := typo.Close("zzz", names, 1, false); got != nil {
		t.Errorf("Close of a name near none = %v", got)
	}
}
