package config

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
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
		r, err := ResolveSpace(SpaceQuery{Flag: flag, Cwd: cwd, Data: data})
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
	if _, err := ResolveSpace(SpaceQuery{Flag: "a.b", Cwd: deep, Data: data}); err == nil {
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
	// Nor when HOME is spelled through a symlink and the folder is not.
	link := filepath.Join(t.TempDir(), "home")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", link)
	real, _ := filepath.EvalSymlinks(sub)
	if dir := Folder(filepath.Join(link, "work")); dir != real {
		t.Fatalf("Folder under a symlinked home: %s, want %s", dir, real)
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

// fakeCreds writes a creds file whose user JWT names space. Nothing here
// checks the signature; the broker does that on connect.
func fakeCreds(t *testing.T, space string) string {
	t.Helper()
	enc := base64.RawURLEncoding
	claims, _ := json.Marshal(map[string]any{"name": "local.alice", "nats": map[string]any{
		"type": "user", "tags": []string{wire.EncodeListTag(wire.TagSpace, []string{space})},
	}})
	jwt := enc.EncodeToString([]byte(`{"alg":"ed25519-nkey"}`)) + "." + enc.EncodeToString(claims) + ".sig"
	p := filepath.Join(t.TempDir(), "alice.creds")
	body := "-----BEGIN NATS USER JWT-----\n" + jwt + "\n------END NATS USER JWT------\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// When nothing names the space, the one mesh running for the folder is it,
// whatever the folder's name: a mesh started before the folder had a
// .cotal/ keeps serving it. Several for one folder are refused by name.
func TestResolveSpaceFindsTheMeshRunningForTheFolder(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	data := t.TempDir()
	proj := filepath.Join(t.TempDir(), "proj")
	deep := filepath.Join(proj, "src")
	if err := os.MkdirAll(filepath.Join(proj, ".cotal", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	folder := Folder(proj)
	if got := Folder(deep); got != folder {
		t.Fatalf("Folder(%s) = %s, want the project %s", deep, got, folder)
	}
	if got := Folder(link); got != folder {
		t.Fatalf("Folder(%s) = %s, want %s: one folder, two spellings", link, got, folder)
	}
	plain := t.TempDir()
	if want, _ := filepath.EvalSymlinks(plain); Folder(plain) != want {
		t.Fatalf("Folder(%s) = %s, want the folder itself: no project above it", plain, Folder(plain))
	}

	running := func(m ...LiveMesh) func() ([]LiveMesh, error) {
		return func() ([]LiveMesh, error) { return m, nil }
	}
	mine := LiveMesh{Space: "default", Folder: folder, PID: 10}
	other := LiveMesh{Space: "other", Folder: folder, PID: 11}
	far := LiveMesh{Space: "far", Folder: plain, PID: 12}
	starting := LiveMesh{Space: "starting", PID: 13} // its broker.json does not say yet
	notAsked := func() ([]LiveMesh, error) {
		t.Error("a named space asked which meshes run")
		return nil, nil
	}
	cases := []struct {
		name, flag, creds, cwd string
		running                func() ([]LiveMesh, error)
		want, source           string
	}{
		{name: "one running for the folder", cwd: link, running: running(far, mine, starting), want: "default", source: FromRunning},
		{name: "from below the project", cwd: deep, running: running(mine), want: "default", source: FromRunning},
		{name: "none for the folder", cwd: deep, running: running(far, starting), want: "proj", source: FromProject},
		{name: "nothing runs", cwd: deep, running: running(), want: "proj", source: FromProject},
		{name: "no project, none for it", cwd: t.TempDir(), running: running(mine), want: DefaultSpace, source: FromDefault},
		{name: "no project, one for it", cwd: plain, running: running(far), want: "far", source: FromRunning},
		{name: "flag", flag: "flagged", creds: fakeCreds(t, "credspace"), cwd: deep, running: notAsked, want: "flagged", source: FromFlag},
		{name: "creds", creds: fakeCreds(t, "credspace"), cwd: deep, running: notAsked, want: "credspace", source: FromCreds},
		{name: "garbage creds name nothing", creds: filepath.Join(deep), cwd: deep, running: running(mine), want: "default", source: FromRunning},
	}
	for _, tc := range cases {
		r, err := ResolveSpace(SpaceQuery{Flag: tc.flag, Creds: tc.creds, Cwd: tc.cwd, Data: data, Running: tc.running})
		if err != nil || r.Space != tc.want || r.Source != tc.source {
			t.Errorf("%s: got %+v %v, want %s from %s", tc.name, r, err, tc.want, tc.source)
		}
	}

	_, err := ResolveSpace(SpaceQuery{Cwd: deep, Data: data, Running: running(other, far, mine)})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || len(amb.Meshes) != 2 || amb.Meshes[0] != mine || amb.Meshes[1] != other {
		t.Fatalf("two meshes for the folder: %v; want an AmbiguousError naming default and other", err)
	}
	for _, want := range []string{folder, "default (pid 10)", "other (pid 11)", "--space"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}

	if err := SetDefaultSpace(data, "chosen"); err != nil {
		t.Fatal(err)
	}
	if r, err := ResolveSpace(SpaceQuery{Cwd: deep, Data: data, Running: notAsked}); err != nil || r.Space != "chosen" || r.Source != FromUse {
		t.Errorf("`cotal use` with a mesh running for the folder: %+v %v", r, err)
	}
}
