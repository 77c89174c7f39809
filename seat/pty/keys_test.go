package pty

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseKey(t *testing.T) {
	tests := []struct {
		name      string
		plain     string
		app       string // "" means the same as plain
		wantError string // a substring of the refusal
	}{
		{name: "Escape", plain: "\x1b"},
		{name: "Enter", plain: "\r"},
		{name: "Tab", plain: "\t"},
		{name: "BTab", plain: "\x1b[Z"},
		{name: "BSpace", plain: "\x7f"},
		{name: "Space", plain: " "},
		{name: "Up", plain: "\x1b[A", app: "\x1bOA"},
		{name: "Down", plain: "\x1b[B", app: "\x1bOB"},
		{name: "Right", plain: "\x1b[C", app: "\x1bOC"},
		{name: "Left", plain: "\x1b[D", app: "\x1bOD"},
		{name: "Home", plain: "\x1b[H", app: "\x1bOH"},
		{name: "End", plain: "\x1b[F", app: "\x1bOF"},
		{name: "PageUp", plain: "\x1b[5~"},
		{name: "PPage", plain: "\x1b[5~"},
		{name: "PageDown", plain: "\x1b[6~"},
		{name: "NPage", plain: "\x1b[6~"},
		{name: "Delete", plain: "\x1b[3~"},
		{name: "DC", plain: "\x1b[3~"},
		{name: "Insert", plain: "\x1b[2~"},
		{name: "IC", plain: "\x1b[2~"},
		{name: "F1", plain: "\x1bOP"},
		{name: "F4", plain: "\x1bOS"},
		{name: "F5", plain: "\x1b[15~"},
		{name: "F12", plain: "\x1b[24~"},
		{name: "C-c", plain: "\x03"},
		{name: "C-C", plain: "\x03"},
		{name: "C-a", plain: "\x01"},
		{name: "C-z", plain: "\x1a"},
		{name: "C-[", plain: "\x1b"},
		{name: "C-]", plain: "\x1d"},
		{name: "C-Space", plain: "\x00"},
		{name: "C-?", plain: "\x7f"},
		{name: "M-x", plain: "\x1bx"},
		{name: "M-Enter", plain: "\x1b\r"},
		{name: "M-Up", plain: "\x1b\x1b[A", app: "\x1b\x1bOA"},
		{name: "C-M-a", plain: "\x1b\x01"},
		{name: "M-C-a", plain: "\x1b\x01"},
		{name: "q", plain: "q"},
		{name: ":", plain: ":"},
		{name: "-", plain: "-"},
		{name: "é", plain: "é"},
		{name: "Escpae", wantError: `unknown key "Escpae"`},
		{name: "escape", wantError: `unknown key "escape"`},
		{name: "F13", wantError: `unknown key "F13"`},
		{name: "", wantError: `unknown key ""`},
		{name: ":q!", wantError: `unknown key ":q!"`},
		{name: "S-Up", wantError: `unknown key "S-Up"`},
		{name: "C-1", wantError: `key "C-1": C- takes a letter`},
		{name: "C-Up", wantError: `key "C-Up": C- takes a letter`},
		{name: "C-C-a", wantError: "C- given twice"},
		{name: "M-", wantError: `unknown key "M-"`},
		{name: "M-Nope", wantError: `unknown key "M-Nope"`},
		{name: "\xff", wantError: "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ParseKey(tt.name)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("ParseKey(%q) = %q, %v; want an error with %q", tt.name, k.bytes(false), err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseKey(%q): %v", tt.name, err)
			}
			app := tt.app
			if app == "" {
				app = tt.plain
			}
			if got := string(KeyBytes([]Key{k}, false)); got != tt.plain {
				t.Errorf("%s = %q; want %q", tt.name, got, tt.plain)
			}
			if got := string(KeyBytes([]Key{k}, true)); got != app {
				t.Errorf("%s in application cursor mode = %q; want %q", tt.name, got, app)
			}
			if k.String() != tt.name {
				t.Errorf("name %q; want %q", k.String(), tt.name)
			}
		})
	}
}

func TestParseKeysRefusesFirstUnknown(t *testing.T) {
	_, err := ParseKeys("Escape", "Nope", "Enter")
	if err == nil || !strings.Contains(err.Error(), `"Nope"`) {
		t.Fatalf("ParseKeys: %v; want a refusal naming Nope", err)
	}
}

// The keys reach the program as typed bytes: no paste markers even though
// the program turned bracketed paste on, and the cursor keys follow the
// cursor-key mode it set.
func TestKeysWrittenRaw(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	s := startSeat(t, "sh", "-c", `printf '\033[?2004h\033[?1h'; stty raw -echo; echo ready; exec cat > "$0"`, out)
	waitScreen(t, s, "ready")
	n, err := s.Keys("Escape", "Up", "C-c", "x", "Enter")
	if err != nil {
		t.Fatalf("Keys: %v", err)
	}
	want := "\x1b\x1bOA\x03x\r"
	if n != len(want) {
		t.Errorf("Keys accepted %d bytes; want %d", n, len(want))
	}
	waitFor(t, 5*time.Second, func() error {
		got, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		if string(got) != want {
			return fmt.Errorf("program read %q; want %q", got, want)
		}
		return nil
	})
}

func TestKeysUnknownWritesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	s := startSeat(t, "sh", "-c", `stty raw -echo; echo ready; exec cat > "$0"`, out)
	waitScreen(t, s, "ready")
	if _, err := s.Keys("a", "Bogus"); err == nil || !strings.Contains(err.Error(), "Bogus") {
		t.Fatalf("Keys with an unknown name: %v; want a refusal naming it", err)
	}
	if _, err := s.Keys("z"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() error {
		got, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		if string(got) != "z" {
			return fmt.Errorf("program read %q; want only the later z", got)
		}
		return nil
	})
}

func TestKeysAfterExitRefused(t *testing.T) {
	s := startSeat(t, "true")
	waitDone(t, s, 5*time.Second)
	if _, err := s.Keys("Enter"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Keys after exit: %v; want ErrNotRunning", err)
	}
}

// What a person does to leave vi: Escape, then :q! and Enter.
func TestKeysLeaveVi(t *testing.T) {
	dir := t.TempDir()
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", `vi -u NONE -N "$0"; echo vi-gone`, filepath.Join(dir, "f.txt")}, Dir: dir})
	waitFor(t, 10*time.Second, func() error {
		if !s.altScreen() {
			return fmt.Errorf("vi not on the alternate screen yet:\n%s", s.Screen())
		}
		return nil
	})
	// Insert mode first, so Escape has something to leave.
	if _, err := s.Keys("i", "h", "i"); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, "hi")
	if _, err := s.Keys("Escape", ":", "q", "!", "Enter"); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, "vi-gone")
	waitDone(t, s, 5*time.Second)
}

func (s *Seat) altScreen() bool {
	s.lockEmu()
	defer s.emuMu.Unlock()
	return s.emu.IsAltScreen()
}
