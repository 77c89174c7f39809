package config

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Setup is what an agent file's setup: key asks of a seat's fresh worktree.
type Setup struct {
	Copy []string // files copied from the main checkout, relative to the project (.env)
	Run  string   // a shell command run in the worktree before the seat's program
}

// setup reads setup: as a map of copy: (a list of relative paths) and
// run: (a string); a bare string is the run command alone.
func (p *agentParser) setup(kl int, n ast.Node) (Setup, error) {
	var s Setup
	var pairs []*ast.MappingValueNode
	switch v := p.anchors.Resolve(n).(type) {
	case *ast.NullNode:
		return s, nil
	case *ast.StringNode, *ast.LiteralNode:
		r, err := p.str("setup", kl, v)
		s.Run = r
		return s, err
	case *ast.MappingNode:
		pairs = v.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{v}
	default:
		return s, p.errf(kl, "setup must be a map with copy: and run:, not a %s", describe(v))
	}
	for _, mv := range pairs {
		el := line(mv.Key)
		k, ok := p.anchors.Resolve(mv.Key).(ast.ScalarNode)
		if !ok || mv.Key.IsMergeKey() {
			return s, p.errf(el, "setup: a key must be copy or run")
		}
		var err error
		switch key := k.GetToken().Value; key {
		case "run":
			s.Run, err = p.str("setup run", el, mv.Value)
		case "copy":
			var lines []int
			s.Copy, lines, err = p.list("setup copy", el, mv.Value)
			for i, f := range s.Copy {
				if err == nil && !plainRel(f) {
					err = p.errf(lines[i], "setup copy %q: name a file inside the checkout by its relative path (.env, config/local.json), not an absolute path or one leaving it", f)
				}
			}
		default:
			err = p.errf(el, "setup: unknown key %q: setup takes copy: and run:", key)
		}
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

// plainRel reports whether f is a relative path that stays where it is
// read from.
func plainRel(f string) bool {
	c := filepath.Clean(f)
	return f != "" && !filepath.IsAbs(f) && c != "." && c != ".." && !strings.HasPrefix(c, "../") && !strings.ContainsRune(f, 0)
}

// budget reads budget: as a positive whole number of tokens; 1_000_000
// and 1000000 alike.
func (p *agentParser) budget(kl int, n ast.Node) (int64, error) {
	v := p.anchors.Resolve(n)
	if _, null := v.(*ast.NullNode); null {
		return 0, nil
	}
	sc, ok := v.(ast.ScalarNode)
	if !ok {
		return 0, p.errf(kl, "budget must be a number of tokens, not a %s", describe(v))
	}
	text := strings.ReplaceAll(sc.GetToken().Value, "_", "")
	b, err := strconv.ParseInt(text, 10, 64)
	if err != nil || b <= 0 {
		return 0, p.errf(kl, "budget %q must be a positive whole number of tokens", sc.GetToken().Value)
	}
	return b, nil
}
