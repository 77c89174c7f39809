package main

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// importRules are DESIGN.md's "what may import what" as checks: for a
// package (and, with a trailing "/...", every package under it), the
// module packages it must not import. A rule for a package that does not
// exist checks nothing.
var importRules = []struct {
	pkg    string
	forbid []string
	only   []string // when set, the only module packages it may import
}{
	{pkg: "mesh/...", forbid: []string{"seat/...", "tui/...", "broker/...", "host/...", "issue/...", "mcp/..."}},
	{pkg: "mesh/wire", only: []string{}},
	{pkg: "mesh/render", only: []string{"mesh/presence", "mesh/wire"}},
	{pkg: "config", only: []string{"mesh/wire"}},
	{pkg: "broker", only: []string{"config", "mesh/wire"}},
	{pkg: "tui/...", forbid: []string{"seat", "seat/pty", "seat/sandbox", "broker/...", "host/...", "issue/..."}},
	{pkg: "mcp/...", forbid: []string{"seat", "seat/pty", "seat/sandbox", "tui/...", "broker/...", "host/...", "issue/..."}},
	{pkg: "seat/...", forbid: []string{"tui/...", "broker/...", "host/...", "issue/...", "mcp/..."}},
	{pkg: "seat/client", forbid: []string{"seat", "seat/pty", "seat/sandbox"}},
	{pkg: "seat/attach/tty", only: []string{"seat/attach", "seat/client", "mesh/ep"}},
	{pkg: "seat/pty", only: []string{"internal/procid"}},
	{pkg: "seat/keeper", only: []string{"seat/pty", "seat/sandbox", "internal/procid"}},
	{pkg: "internal/procid", only: []string{}},
	{pkg: "seat/sandbox", only: []string{}},
	{pkg: "internal/modelserver", only: []string{}},
	{pkg: "host/...", forbid: []string{"tui/..."}},
	{pkg: "issue/...", forbid: []string{"tui/...", "host/..."}},
}

const module = "github.com/cotal-go/cotal/"

// matches reports whether the module-relative package rel fits pattern
// (a package, or a tree with "/...").
func matches(pattern, rel string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == tree || strings.HasPrefix(rel, tree+"/")
	}
	return rel == pattern
}

func TestImportRules(t *testing.T) {
	imports := map[string][]string{} // module-relative package -> module-relative imports
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "e2e") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				imports[filepath.ToSlash(path)] = append(imports[filepath.ToSlash(path)], rel)
			}
		}
		if _, ok := imports[filepath.ToSlash(path)]; !ok {
			imports[filepath.ToSlash(path)] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports["mesh"]) == 0 || len(imports["seat"]) == 0 {
		t.Fatalf("the walk found no imports of mesh or seat (%d packages): the check would pass vacuously", len(imports))
	}
	for pkg, imps := range imports {
		for _, r := range importRules {
			if !matches(r.pkg, pkg) {
				continue
			}
			for _, imp := range imps {
				for _, f := range r.forbid {
					if matches(f, imp) {
						t.Errorf("%s imports %s, which DESIGN.md forbids", pkg, imp)
					}
				}
				if r.only != nil && !slices.Contains(r.only, imp) {
					t.Errorf("%s imports %s; DESIGN.md allows it only %v", pkg, imp, r.only)
				}
			}
		}
	}
}
