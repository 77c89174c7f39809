package host_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
)

// A mesh records the folder it serves, so the CLI run there without a
// space named finds it; a mesh that stopped is no longer listed.
func TestRunningMeshesNameTheFolderEachServes(t *testing.T) {
	data := t.TempDir()
	proj := t.TempDir()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	startIn := func(space, folder string) *host.Host {
		t.Helper()
		p := config.Paths{Space: space, StoreDir: filepath.Join(t.TempDir(), "store")}
		h, err := host.Start(context.Background(), host.Config{Data: data, Paths: p, ProjectDir: folder, NoManager: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		return h
	}
	a := startIn("alpha", proj)
	startIn("beta", "") // serves the folder it was started in
	got, err := host.RunningMeshes(data)
	want := []config.LiveMesh{
		{Space: "alpha", Folder: proj, PID: os.Getpid()},
		{Space: "beta", Folder: config.Folder(cwd), PID: os.Getpid()},
	}
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("RunningMeshes: %+v %v, want %+v", got, err, want)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := host.RunningMeshes(data); err != nil || len(got) != 1 || got[0].Space != "beta" {
		t.Fatalf("RunningMeshes after alpha stopped: %+v %v", got, err)
	}
}
