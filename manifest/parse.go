package manifest

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/cotal-go/cotal/config"
)

// Error is a refused manifest. Error reads "<path>:<line>:<column>: why",
// the form editors jump to.
type Error struct {
	Path      string
	Line, Col int
	Err       error
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %v", e.Path, e.Line, e.Col, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// reader walks one file's YAML tree, refusing what the manifest does not
// allow where it was written.
type reader struct {
	path    string
	anchors config.Anchors
}

func (r *reader) at(n ast.Node, format string, a ...any) error {
	line, col := pos(n)
	return &Error{Path: r.path, Line: line, Col: col, Err: fmt.Errorf(format, a...)}
}

func pos(n ast.Node) (int, int) {
	if n == nil || n.GetToken() == nil {
		return 1, 1
	}
	p := n.GetToken().Position
	return max(p.Line, 1), max(p.Column, 1)
}

// root parses b and returns its one document's top-level node.
func (r *reader) root(b []byte) (ast.Node, error) {
	f, err := parser.ParseBytes(b, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			p := ye.GetToken().Position
			return nil, &Error{Path: r.path, Line: max(p.Line, 1), Col: max(p.Column, 1), Err: errors.New(ye.GetMessage())}
		}
		return nil, &Error{Path: r.path, Line: 1, Col: 1, Err: err}
	}
	var root ast.Node
	for _, d := range f.Docs {
		if d.Body == nil {
			continue
		}
		if root != nil {
			return nil, r.at(d.Body, "a manifest is one YAML document; this is a second (one file describes one space)")
		}
		root = d.Body
	}
	if root == nil {
		return nil, &Error{Path: r.path, Line: 1, Col: 1, Err: errors.New("the file is empty: it needs apiVersion: cotal/v1, kind: Mesh, space and channels")}
	}
	r.anchors.Collect(root)
	return root, nil
}

func shape(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "map"
	case *ast.SequenceNode:
		return "list"
	case *ast.NullNode:
		return "null"
	case *ast.BoolNode:
		return "boolean"
	case *ast.IntegerNode, *ast.FloatNode:
		return "number"
	}
	return "string"
}

// entry is one key: value of a map, with the key's node for refusals.
type entry struct {
	key   string
	keyN  ast.Node
	value ast.Node
}

// mapping reads a map's entries in order, refusing merge keys, keys that
// are not plain words and a key written twice. what names the map in a
// refusal.
func (r *reader) mapping(n ast.Node, what string) ([]entry, error) {
	var pairs []*ast.MappingValueNode
	switch v := r.anchors.Resolve(n).(type) {
	case *ast.MappingNode:
		pairs = v.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{v}
	case *ast.NullNode:
		return nil, nil
	default:
		return nil, r.at(n, "%s must be a map of key: value lines, not a %s", what, shape(v))
	}
	seen := map[string]ast.Node{}
	out := make([]entry, 0, len(pairs))
	for _, mv := range pairs {
		if mv.Key.IsMergeKey() {
			return nil, r.at(mv.Key, "merge keys (<<) are not supported in a manifest; write the keys out")
		}
		k, ok := r.anchors.Resolve(mv.Key).(ast.ScalarNode)
		if !ok {
			return nil, r.at(mv.Key, "a key of %s must be a plain word, not a %s", what, shape(mv.Key))
		}
		key := k.GetToken().Value
		if first, dup := seen[key]; dup {
			l, c := pos(first)
			return nil, r.at(mv.Key, "%s: key %q is written twice (first at line %d, column %d)", what, key, l, c)
		}
		seen[key] = mv.Key
		out = append(out, entry{key: key, keyN: mv.Key, value: mv.Value})
	}
	return out, nil
}

// unknown refuses a key no field reads, naming the keys that are read.
func (r *reader) unknown(e entry, what string, known []string) error {
	if k := near(e.key, known); k != "" {
		return r.at(e.keyN, "unknown key %q in %s: did you mean %s?", e.key, what, k)
	}
	return r.at(e.keyN, "unknown key %q in %s (known: %s)", e.key, what, strings.Join(known, ", "))
}

// str reads a string scalar. A number or a boolean is refused: a value
// such as `model: 4` or `role: yes` is a typo more often than meant.
func (r *reader) str(e entry) (string, error) {
	switch v := r.anchors.Resolve(e.value).(type) {
	case *ast.StringNode:
		return v.Value, nil
	case *ast.LiteralNode:
		return v.Value.Value, nil
	case *ast.NullNode:
		return "", r.at(e.value, "%s has no value; give a string or leave the key out", e.key)
	default:
		if tk := v.GetToken(); tk != nil && tk.Type == token.StringType {
			return tk.Value, nil
		}
		return "", r.at(e.value, "%s must be a string, not a %s", e.key, shape(v))
	}
}

func (r *reader) boolean(e entry) (bool, error) {
	switch v := r.anchors.Resolve(e.value).(type) {
	case *ast.BoolNode:
		return v.Value, nil
	default:
		return false, r.at(e.value, "%s must be true or false, not a %s", e.key, shape(v))
	}
}

func (r *reader) integer(e entry) (int, error) {
	switch v := r.anchors.Resolve(e.value).(type) {
	case *ast.IntegerNode:
		switch n := v.Value.(type) {
		case int64:
			return int(n), nil
		case uint64:
			return int(min(n, 1<<31)), nil
		}
	}
	return 0, r.at(e.value, "%s must be a whole number, not a %s", e.key, shape(r.anchors.Resolve(e.value)))
}

// item is one list entry with its node.
type item struct {
	value string
	n     ast.Node
}

// strings reads a list of strings; a null value is an empty list.
func (r *reader) strings(e entry) ([]item, error) {
	switch v := r.anchors.Resolve(e.value).(type) {
	case *ast.NullNode:
		return []item{}, nil
	case *ast.SequenceNode:
		out := make([]item, 0, len(v.Values))
		for _, el := range v.Values {
			s, err := r.str(entry{key: e.key + " entry", value: el})
			if err != nil {
				return nil, err
			}
			out = append(out, item{s, el})
		}
		return out, nil
	default:
		return nil, r.at(e.value, "%s must be a list such as [a, b], not a %s", e.key, shape(v))
	}
}

// near returns the key of known that key is one typo from, or "".
func near(key string, known []string) string {
	for _, k := range slices.Sorted(slices.Values(known)) {
		if strings.EqualFold(k, key) || oneEdit(strings.ToLower(k), strings.ToLower(key)) {
			return k
		}
	}
	return ""
}

func oneEdit(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) < len(rb) {
		ra, rb = rb, ra
	}
	switch len(ra) - len(rb) {
	case 0:
		var diff []int
		for i := range ra {
			if ra[i] != rb[i] {
				diff = append(diff, i)
			}
		}
		return len(diff) == 1 || len(diff) == 2 && diff[1] == diff[0]+1 && ra[diff[0]] == rb[diff[1]] && ra[diff[1]] == rb[diff[0]]
	case 1:
		i := 0
		for i < len(rb) && ra[i] == rb[i] {
			i++
		}
		return string(ra[i+1:]) == string(rb[i:])
	}
	return false
}
