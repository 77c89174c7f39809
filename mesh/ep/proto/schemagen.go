package proto

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// SchemaFor is the closed JSON Schema 2020-12 of a Go value's JSON form, so a command's contract is generated from the struct its handler decodes and cannot drift from it. Object fields follow their json tags; a field without omitempty is required; a struct is closed (no other properties). A struct with a field tagged `json:"-" schema:"open"` keeps fields of its own beyond those it names, so its schema is open and checks only its required fields. A `schema:"..."` tag adds constraints, comma-separated: minLength=N, maxLength=N, minimum=N, maximum=N, minItems=N, maxItems=N, pattern=RE (last, may hold commas), enum=a|b|c. A nil v is the void schema.
func SchemaFor(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage(VoidSchema)
	}
	b, err := json.Marshal(schemaOf(reflect.TypeOf(v), ""))
	if err != nil {
		panic(fmt.Sprintf("ep: schema of %T: %v", v, err))
	}
	return b
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

func schemaOf(t reflect.Type, tag string) map[string]any {
	s := map[string]any{}
	switch {
	case t == rawMessageType || t.Kind() == reflect.Interface:
		// any JSON value
	case t.Kind() == reflect.Pointer:
		return map[string]any{"anyOf": []any{schemaOf(t.Elem(), tag), map[string]any{"type": "null"}}}
	case t.Kind() == reflect.Struct:
		s["type"] = "object"
		props, required := map[string]any{}, []string{}
		addFields(t, props, &required)
		if open(t) {
			// Fields it does not name are its own, with any type, and so
			// may be those it does name: only the required ones are
			// checked.
			for name := range props {
				if !slices.Contains(required, name) {
					delete(props, name)
				}
			}
		} else {
			s["additionalProperties"] = false
		}
		s["properties"] = props
		if len(required) > 0 {
			s["required"] = required
		}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		s["type"] = []string{"array", "null"}
		s["items"] = schemaOf(t.Elem(), "")
	case t.Kind() == reflect.Map:
		s["type"] = []string{"object", "null"}
		s["additionalProperties"] = schemaOf(t.Elem(), "")
	case t.Kind() == reflect.String:
		s["type"] = "string"
	case t.Kind() == reflect.Bool:
		s["type"] = "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		s["type"] = "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		s["type"] = "number"
	default:
		panic(fmt.Sprintf("ep: no JSON schema for Go type %s", t))
	}
	constrain(s, tag)
	return s
}

// open reports whether a struct keeps the fields its JSON form carries
// beyond its own (a field tagged `json:"-" schema:"open"`, filled by its
// own UnmarshalJSON): its schema is open, as an extension part's must be.
func open(t reflect.Type) bool {
	for i := range t.NumField() {
		if f := t.Field(i); f.Tag.Get("json") == "-" && f.Tag.Get("schema") == "open" {
			return true
		}
	}
	return false
}

func addFields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			addFields(f.Type, props, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = schemaOf(f.Type, f.Tag.Get("schema"))
		if !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,") {
			*required = append(*required, name)
		}
	}
}

// constrain applies a schema tag's constraints.
func constrain(s map[string]any, tag string) {
	for tag != "" {
		var part string
		if strings.HasPrefix(tag, "pattern=") {
			part, tag = tag, ""
		} else {
			part, tag, _ = strings.Cut(tag, ",")
		}
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				panic(fmt.Sprintf("ep: schema tag %s: %v", part, err))
			}
			s[k] = n
		case "pattern":
			s[k] = v
		case "enum":
			s[k] = strings.Split(v, "|")
		default:
			panic(fmt.Sprintf("ep: unknown schema tag %q", part))
		}
	}
}
