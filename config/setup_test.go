package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/config"
)

func loadLines(t *testing.T, lines string) (*config.AgentFile, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seat.md")
	if err := os.WriteFile(path, []byte("---\nname: seat\n"+lines+"\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.LoadAgentFile(path)
}

func TestAgentFileWorktreeSetupBudget(t *testing.T) {
	a, err := loadLines(t, "worktree: true\nsetup:\n  copy: [.env, config/local.json]\n  run: make deps\nbudget: 2_000_000")
	if err != nil {
		t.Fatal(err)
	}
	l := a.Launch
	if !l.Worktree || l.Budget != 2_000_000 || l.Setup.Run != "make deps" || !reflect.DeepEqual(l.Setup.Copy, []string{".env", "config/local.json"}) {
		t.Fatalf("launch %+v", l)
	}
	if a, err = loadLines(t, "setup: npm ci"); err != nil || a.Launch.Setup.Run != "npm ci" || a.Launch.Worktree {
		t.Fatalf("setup as a string: %+v %v", a, err)
	}
	for _, tc := range []struct{ lines, want string }{
		{"worktree: yes", `worktree must be true or false, not "yes"`},
		{"setup: [a]", "setup must be a map with copy: and run:, not a list"},
		{"setup:\n  copy: [../secrets]", `setup copy "../secrets": name a file inside the checkout`},
		{"setup:\n  copy: [/etc/passwd]", `setup copy "/etc/passwd"`},
		{"setup:\n  copy: .env", "setup copy must be a list"},
		{"setup:\n  runn: x", `setup: unknown key "runn"`},
		{"budget: -5", `budget "-5" must be a positive whole number of tokens`},
		{"budget: lots", `budget "lots" must be a positive whole number`},
		{"budget: [1]", "budget must be a number of tokens, not a list"},
		{"worktre: true", "did you mean worktree?"},
	} {
		if _, err := loadLines(t, tc.lines); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.lines, err, tc.want)
		}
	}
}
