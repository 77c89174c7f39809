package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
)

// A process keeps the space it resolved first: a dashboard serving this
// folder's mesh goes on dialling it when a second mesh starts for the
// folder, while a new command there is refused as ambiguous.
func TestAProcessKeepsTheSpaceItResolved(t *testing.T) {
	data := t.TempDir()
	t.Setenv("COTAL_HOME", data)
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	startFor := func(space string) {
		t.Helper()
		h, err := host.Start(context.Background(), host.Config{Data: data, Paths: config.Paths{Space: space, StoreDir: filepath.Join(t.TempDir(), "store")}, NoManager: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
	}
	fresh := func() *globals { return &globals{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}} }

	startFor("first")
	dash := fresh()
	if _, p, res, err := dash.paths(); err != nil || p.Space != "first" || res.Source != config.FromRunning {
		t.Fatalf("paths with one mesh for the folder: %s %+v %v", p.Space, res, err)
	}
	startFor("second")
	var amb *config.AmbiguousError
	if _, _, _, err := fresh().paths(); !errors.As(err, &amb) {
		t.Fatalf("a new command with two meshes for the folder: %v, want it refused as ambiguous", err)
	}
	if _, p, _, err := dash.paths(); err != nil || p.Space != "first" {
		t.Fatalf("the dashboard's next dial: %s %v, want first still", p.Space, err)
	}
	if tg, err := dash.caller().Target(); err != nil || tg.Paths.Space != "first" {
		t.Fatalf("the dashboard's next target: %+v %v", tg, err)
	}
}
