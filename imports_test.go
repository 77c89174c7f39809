package main

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// importRules are DESIGN.md's "what may import what" as checks: every
// package of the module has one, naming the module packages it may
// import (test files aside), so a new import is a decision written here
// and in DESIGN.md. A package with no rule, or a rule for a package that
// does not exist, fails the test.
var importRules = map[string][]string{
	".":                     {"*"}, // main wires everything
	"launch":                {"broker", "clirender", "clirun", "config", "host", "internal/cliargs", "internal/quit", "manifest", "manifest/apply", "mesh", "mesh/wire", "seat", "seat/attach/tty", "seat/client", "tui"},
	"clirender":             {"bench", "clirun", "config", "host", "internal/cliargs", "manifest", "manifest/apply", "mcp", "mesh", "mesh/ep", "mesh/ep/proto", "mesh/presence", "mesh/render", "mesh/wire", "seat/attach/tty", "seat/client", "seat/sandbox", "worktree"},
	"clirun":                {"broker", "config", "host", "internal/cliargs", "internal/quit", "issue", "mcp", "mesh", "mesh/ep", "mesh/ep/proto", "mesh/presence", "mesh/wire", "seat/attach/tty", "seat/client", "seat/pty", "tui/line", "worktree"},
	"host":                  {"broker", "config", "issue", "manifest", "mesh", "mesh/delivery", "mesh/ep", "mesh/ep/proto", "mesh/presence", "mesh/wire", "seat", "seat/client", "seat/keeper", "seat/sandbox"},
	"bench":                 {"broker", "config", "host", "mesh", "mesh/delivery", "mesh/ep", "mesh/ep/proto", "mesh/render", "mesh/wire", "seat/client", "seat/pty", "seat/sandbox"},
	"issue":                 {"broker", "config", "internal/procid", "mesh/wire", "seat"},
	"manifest/apply":        {"broker", "config", "issue", "manifest", "mesh", "mesh/ep", "mesh/ep/proto", "mesh/wire", "seat/client"},
	"manifest":              {"config", "mesh", "mesh/wire"},
	"tui/line":              {"mesh", "mesh/presence", "mesh/render", "mesh/wire"},
	"tui":                   {"mesh", "mesh/ep", "mesh/presence", "mesh/render", "mesh/wire", "seat/attach/tty", "seat/client"},
	"mcp":                   {"internal/typo", "mesh", "mesh/ep", "mesh/ep/proto", "mesh/presence", "mesh/render", "mesh/wire", "seat/client", "seat/sandbox"},
	"seat":                  {"config", "internal/procid", "mesh", "mesh/ep", "mesh/ep/proto", "mesh/presence", "mesh/render", "mesh/wire", "seat/attach", "seat/client", "seat/keeper", "seat/pty", "seat/sandbox", "transcript", "worktree"},
	"seat/attach/tty":       {"mesh/ep", "mesh/ep/proto", "mesh/wire", "seat/attach", "seat/client"},
	"seat/client":           {"mesh", "mesh/ep", "mesh/ep/proto", "mesh/presence", "mesh/wire"},
	"seat/attach":           {"mesh/ep/proto", "mesh/wire"},
	"mesh/delivery":         {"mesh", "mesh/ep", "mesh/ep/proto", "mesh/presence", "mesh/wire"},
	"mesh":                  {"internal/typo", "internal/violation", "mesh/ep", "mesh/ep/proto", "mesh/presence", "mesh/render", "mesh/wire"},
	"mesh/render":           {"mesh/presence", "mesh/wire"},
	"mesh/ep":               {"internal/violation", "mesh/ep/proto", "mesh/wire"},
	"mesh/ep/proto":         {"mesh/wire"},
	"mesh/presence":         {"mesh/wire"},
	"broker":                {"config", "mesh/wire"},
	"config":                {"internal/typo", "mesh/wire"},
	"mesh/wire":             {},
	"seat/pty":              {"internal/procid"},
	"seat/keeper":           {"internal/procid", "seat/pty", "seat/sandbox"},
	"seat/sandbox":          {},
	"internal/violation":    {},
	"internal/procid":       {},
	"internal/typo":         {},
	"internal/cliargs":      {"config", "mesh/wire"},
	"internal/quit":         {},
	"internal/modelserver":  {},
	"internal/testmesh":     {"broker", "config", "mesh/wire"},
	"internal/testdelivery": {"broker", "internal/testmesh", "internal/testutil", "mesh/delivery"},
	"internal/testutil":     {},
	"internal/testcluster":  {},
	"worktree":              {},
	"transcript":            {},
}

const module = "github.com/cotal-go/cotal/"

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
		rel := filepath.ToSlash(path)
		imports[rel] = []string{}
		for _, imp := range p.Imports {
			if m, ok := strings.CutPrefix(imp, module); ok {
				imports[rel] = append(imports[rel], m)
			}
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
		may, ok := importRules[pkg]
		if !ok {
			t.Errorf("package %s has no import rule: add one here and to DESIGN.md's \"what may import what\"", pkg)
			continue
		}
		if slices.Contains(may, "*") {
			continue
		}
		for _, imp := range imps {
			if !slices.Contains(may, imp) {
				t.Errorf("%s imports %s; DESIGN.md allows it only %v", pkg, imp, may)
			}
		}
	}
	for pkg := range importRules {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("the import rule for %s names no package of the module: remove it", pkg)
		}
	}
}
