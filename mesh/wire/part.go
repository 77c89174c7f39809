package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// The part kinds the schema defines; any other kind must be a reverse-DNS extension.
const (
	PartText     = "text"
	PartData     = "data"
	PartArtifact = "artifact"
)

// Part is one piece of message content; an extension part keeps its own fields in Extra so it survives a relay untouched.
type Part struct {
	Kind      string          `json:"kind"`
	Text      string          `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Name      string          `json:"name,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Digest    string          `json:"digest,omitempty"`
	Size      *int64          `json:"size,omitempty"`
	// Extra is every field of an extension part, and the fields a schema
	// kind's part carries beyond its own; its schema is open.
	Extra map[string]json.RawMessage `json:"-" schema:"open"`
}

// MarshalJSON writes kind first, always writes text for a text part, and appends Extra fields the typed fields did not already write.
func (p Part) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	written := map[string]bool{}
	put := func(key string, raw []byte) {
		if len(written) > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(raw)
		written[key] = true
	}
	putString := func(key, v string) {
		raw, _ := json.Marshal(v)
		put(key, raw)
	}
	b.WriteByte('{')
	putString("kind", p.Kind)
	if p.Kind == PartText || p.Text != "" {
		putString("text", p.Text)
	}
	if len(p.Data) > 0 {
		if !json.Valid(p.Data) {
			return nil, fmt.Errorf("part %q: data is not valid JSON", p.Kind)
		}
		put("data", p.Data)
	}
	if p.Name != "" {
		putString("name", p.Name)
	}
	if p.MediaType != "" {
		putString("mediaType", p.MediaType)
	}
	if p.Digest != "" {
		putString("digest", p.Digest)
	}
	if p.Size != nil {
		put("size", fmt.Appendf(nil, "%d", *p.Size))
	}
	keys := make([]string, 0, len(p.Extra))
	for k := range p.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if written[k] {
			continue
		}
		v := p.Extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("part %q: field %q is not valid JSON", p.Kind, k)
		}
		put(k, v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the fields of the part's kind, keeps every field of an extension part in Extra, and ignores unknown fields of the schema's own kinds.
func (p *Part) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("part: %w", err)
	}
	var q Part
	if err := unmarshalField(fields, "kind", &q.Kind); err != nil {
		return err
	}
	if q.Kind == "" {
		return fmt.Errorf("part: kind is missing")
	}
	switch q.Kind {
	case PartText:
		if err := unmarshalField(fields, "text", &q.Text); err != nil {
			return err
		}
	case PartData:
		if raw, ok := fields["data"]; ok {
			q.Data = raw
		}
	case PartArtifact:
		for key, dst := range map[string]*string{"name": &q.Name, "mediaType": &q.MediaType, "digest": &q.Digest} {
			if err := unmarshalField(fields, key, dst); err != nil {
				return err
			}
		}
		if raw, ok := fields["size"]; ok {
			var n int64
			if err := json.Unmarshal(raw, &n); err != nil {
				return fmt.Errorf("part artifact: size: %w", err)
			}
			q.Size = &n
		}
	default:
		delete(fields, "kind")
		if len(fields) > 0 {
			q.Extra = fields
		}
	}
	*p = q
	return nil
}

// unmarshalField decodes fields[key] into dst when present, naming the field on failure.
func unmarshalField(fields map[string]json.RawMessage, key string, dst *string) error {
	raw, ok := fields[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("part: %s: %w", key, err)
	}
	return nil
}
