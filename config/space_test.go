package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolveSpaceOrder(t *testing.T) {
	data := t.TempDir()
	proj := filepath.Join(t.TempDir(), "My Project")
	deep := filepath.Join(proj, "src", "pkg")
	if err := os.MkdirAll(filepath.Join(proj, ".cotal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())

	check := func(name, flag, cwd, want, source string) {
		t.Helper()
		r, err := ResolveSpace(flag, cwd, data)
		if err != nil || r.Space != want || r.Source != source {
			t.Errorf("%s: got %+v %v, want %s from %s", name, r, err, want, source)
		}
	}
	check("nothing", "", t.TempDir(), DefaultSpace, FromDefault)
	check("project", "", deep, "My_Project", FromProject)
	if err := SetDefaultSpace(data, "chosen"); err != nil {
		t.Fatal(err)
	}
	check("use beats project", "", deep, "chosen", FromUse)
	check("flag beats all", "flagged", deep, "flagged", FromFlag)
	if _, err := ResolveSpace("a.b", deep, data); err == nil {
		t.Error("an invalid --space was accepted")
	}
	if err := SetDefaultSpace(data, "bad/name"); err == nil {
		t.Error("an invalid default space was accepted")
	}
}

func TestHomeCotalIsNotAProject(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, ".cotal"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(home, "work")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if dir := ProjectDir(sub); dir != "" {
		t.Fatalf("home's ~/.cotal made %s a project", dir)
	}
}

func TestDataDirPrecedence(t *testing.T) {
	t.Setenv("COTAL_HOME", "/x/cotal-home")
	t.Setenv("XDG_DATA_HOME", "/x/xdg")
	if d, _ := DataDir(); d != "/x/cotal-home" {
		t.Errorf("COTAL_HOME: got %s", d)
	}
	t.Setenv("COTAL_HOME", "")
	if d, _ := DataDir(); d != "/x/xdg/cotal" {
		t.Errorf("XDG_DATA_HOME: got %s", d)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/x/home")
	if d, _ := DataDir(); d != "/x/home/.local/share/cotal" {
		t.Errorf("HOME: got %s", d)
	}
}

func TestWriteFileAtomicMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "secret")
	if err := WriteFileAtomic(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode().Perm(), err)
	}
}
