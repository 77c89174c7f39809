package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// refusal is a tool answer that says no: its text goes to the model as a
// tool error, and nothing else happened.
type refusal struct{ text string }

func (r refusal) Error() string { return r.text }

func refusef(format string, args ...any) error { return refusal{fmt.Sprintf(format, args...)} }

// failure is a tool answer saying the work itself failed, as the sentence
// the model reads ("Couldn't read the roster: ..."); it wraps the error it
// reports.
type failure struct {
	text string
	err  error
}

func (f failure) Error() string { return f.text }
func (f failure) Unwrap() error { return f.err }

// couldnt is the answer of a tool that could not do what it was asked:
// "Couldn't <what>: <why>".
func couldnt(what string, err error) error {
	return failure{"Couldn't " + what + ": " + err.Error(), err}
}

// params is the contract of one tool's arguments, generated from the Go
// struct its handler decodes: the closed JSON Schema (proto.SchemaFor, with
// each field's `desc` tag as its description), compiled once.
type params struct {
	names  []string // in declaration order
	schema json.RawMessage
	check  *proto.Schema
}

func paramsOf(v any) params {
	t := reflect.TypeOf(v)
	var p params
	desc := map[string]string{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p.names = append(p.names, name)
		if d := f.Tag.Get("desc"); d != "" {
			desc[name] = d
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(proto.SchemaFor(v), &doc); err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", v, err))
	}
	if props, ok := doc["properties"].(map[string]any); ok {
		for name, d := range desc {
			if prop, ok := props[name].(map[string]any); ok {
				prop["description"] = d
			}
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", v, err))
	}
	p.schema = b
	if p.check, err = proto.CompileSchema(b); err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", v, err))
	}
	return p
}

// decodeArgs checks a tool call's arguments against the tool's contract
// before anything runs: an argument the tool does not list (an owner, an
// actor, a caller) is refused by name, then the values are validated and
// decoded into out.
func decodeArgs(tool string, p params, raw json.RawMessage, out any) error {
	obj := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if t[0] != '{' || json.Unmarshal(t, &obj) != nil {
			return refusef("%s: arguments must be a JSON object", tool)
		}
	}
	var unknown []string
	for k := range obj {
		if !contains(p.names, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		if len(p.names) == 0 {
			return refusef("%s takes no arguments (got %s)", tool, strings.Join(unknown, ", "))
		}
		return refusef("%s: unknown argument(s): %s — this tool accepts only: %s", tool, strings.Join(unknown, ", "), strings.Join(p.names, ", "))
	}
	b, _ := json.Marshal(obj)
	if err := p.check.Validate(b); err != nil {
		return refusef("%s: invalid arguments: %v", tool, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return refusef("%s: invalid arguments: %v", tool, err)
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
