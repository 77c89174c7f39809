package config

import "github.com/goccy/go-yaml/ast"

// Anchors are a YAML document's &anchors by name, so that a reader of
// agent files or manifests follows an alias to the value it names.
type Anchors map[string]ast.Node

// Collect records every anchor under root.
func (a Anchors) Collect(root ast.Node) { ast.Walk(a, root) }

// Visit records an anchor; it makes Anchors an ast.Visitor.
func (a Anchors) Visit(n ast.Node) ast.Visitor {
	if v, ok := n.(*ast.AnchorNode); ok && v.Name != nil {
		a[v.Name.GetToken().Value] = v.Value
	}
	return a
}

// Resolve looks through anchors, aliases and tags to the node that holds
// the value.
func (a Anchors) Resolve(n ast.Node) ast.Node {
	for range 64 { // an alias chain longer than this is a loop
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			target, ok := a[v.Value.GetToken().Value]
			if !ok {
				return n
			}
			n = target
		default:
			return n
		}
	}
	return n
}
