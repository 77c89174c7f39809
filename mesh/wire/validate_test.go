package wire_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

// validMessage is a conforming channel post each case below breaks in one way.
func validMessage() wire.Message {
	return wire.Message{
		ID:      "0b6f4a2e-1f2a-4c3b-9d8e-7a6b5c4d3e2f",
		TS:      1700000000000,
		Space:   "main",
		From:    wire.Sender{ID: ownerA + ".alice", Name: "alice"},
		Channel: "team.backend",
		Parts:   wire.TextParts("hi"),
	}
}

func TestMessageValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*wire.Message)
		wantErr string // substring naming the field; "" = valid
	}{
		{name: "valid", edit: func(*wire.Message) {}},
		{name: "dm", edit: func(m *wire.Message) { m.Channel, m.To = "", ownerB+".bob" }},
		{name: "anycast", edit: func(m *wire.Message) { m.Channel, m.ToService = "", "reviewer" }},
		{name: "empty text allowed", edit: func(m *wire.Message) { m.Parts = wire.TextParts("") }},
		{name: "no id", edit: func(m *wire.Message) { m.ID = "" }, wantErr: "id:"},
		{name: "zero ts", edit: func(m *wire.Message) { m.TS = 0 }, wantErr: "ts:"},
		{name: "negative ts", edit: func(m *wire.Message) { m.TS = -1 }, wantErr: "ts:"},
		{name: "no space", edit: func(m *wire.Message) { m.Space = "" }, wantErr: "space:"},
		{name: "bad space", edit: func(m *wire.Message) { m.Space = "a.b" }, wantErr: "space:"},
		{name: "from not principal", edit: func(m *wire.Message) { m.From.ID = "alice" }, wantErr: "from.id:"},
		{name: "from nkey owner", edit: func(m *wire.Message) { m.From.ID = nkey + ".alice" }, wantErr: "from.id:"},
		{name: "no route", edit: func(m *wire.Message) { m.Channel = "" }, wantErr: "exactly one must be set, found 0"},
		{name: "two routes", edit: func(m *wire.Message) { m.To = ownerB + ".bob" }, wantErr: "exactly one must be set, found 2"},
		{name: "three routes", edit: func(m *wire.Message) { m.To, m.ToService = ownerB+".bob", "r" }, wantErr: "found 3"},
		{name: "wildcard channel", edit: func(m *wire.Message) { m.Channel = "team.>" }, wantErr: `channel: cannot publish to wildcard channel "team.>"`},
		{name: "invalid channel", edit: func(m *wire.Message) { m.Channel = "foo/bar" }, wantErr: "channel: invalid channel"},
		{name: "bad to", edit: func(m *wire.Message) { m.Channel, m.To = "", "bob" }, wantErr: "to:"},
		{name: "blank toService", edit: func(m *wire.Message) { m.Channel, m.ToService = "", "  " }, wantErr: "toService:"},
		{name: "no parts", edit: func(m *wire.Message) { m.Parts = nil }, wantErr: "parts:"},
		{name: "part without kind", edit: func(m *wire.Message) { m.Parts = []wire.Part{{Text: "x"}} }, wantErr: "parts[0].kind:"},
		{name: "bare unknown kind", edit: func(m *wire.Message) { m.Parts = []wire.Part{{Kind: "poll"}} }, wantErr: `parts[0].kind: "poll"`},
		{name: "extension kind", edit: func(m *wire.Message) { m.Parts = []wire.Part{{Kind: "com.example-1.poll"}} }},
		{name: "extension kind empty segment", edit: func(m *wire.Message) { m.Parts = []wire.Part{{Kind: "com..poll"}} }, wantErr: "parts[0].kind:"},
		{name: "extension kind underscore", edit: func(m *wire.Message) { m.Parts = []wire.Part{{Kind: "com.ex_ample"}} }, wantErr: "parts[0].kind:"},
		{name: "data", edit: func(m *wire.Message) { m.Parts = []wire.Part{{Kind: "data", Data: json.RawMessage(`{"a":1}`)}} }},
		{name: "data missing", edit: func(m *wire.Message) { m.Parts = []wire.Part{{Kind: "data"}} }, wantErr: "parts[0].data:"},
		{name: "data invalid", edit: func(m *wire.Message) { m.Parts = []wire.Part{{Kind: "data", Data: json.RawMessage(`{`)}} }, wantErr: "parts[0].data:"},
		{name: "artifact", edit: func(m *wire.Message) { m.Parts = []wire.Part{artifact(func(*wire.Part) {})} }},
		{name: "second part named", edit: func(m *wire.Message) { m.Parts = append(m.Parts, artifact(func(p *wire.Part) { p.Name = "" })) }, wantErr: "parts[1].name:"},
		{name: "artifact no media type", edit: func(m *wire.Message) { m.Parts = []wire.Part{artifact(func(p *wire.Part) { p.MediaType = "" })} }, wantErr: "parts[0].mediaType:"},
		{name: "artifact uppercase digest", edit: func(m *wire.Message) {
			m.Parts = []wire.Part{artifact(func(p *wire.Part) { p.Digest = strings.ToUpper(p.Digest[:7]) + strings.ToUpper(p.Digest[7:]) })}
		}, wantErr: "parts[0].digest:"},
		{name: "artifact short digest", edit: func(m *wire.Message) {
			m.Parts = []wire.Part{artifact(func(p *wire.Part) { p.Digest = p.Digest[:70] })}
		}, wantErr: "parts[0].digest:"},
		{name: "artifact md5", edit: func(m *wire.Message) {
			m.Parts = []wire.Part{artifact(func(p *wire.Part) { p.Digest = "md5:" + p.Digest[7:] })}
		}, wantErr: "parts[0].digest:"},
		{name: "artifact no size", edit: func(m *wire.Message) { m.Parts = []wire.Part{artifact(func(p *wire.Part) { p.Size = nil })} }, wantErr: "parts[0].size:"},
		{name: "artifact negative size", edit: func(m *wire.Message) { m.Parts = []wire.Part{artifact(func(p *wire.Part) { p.Size = int64p(-1) })} }, wantErr: "parts[0].size:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := validMessage()
			tt.edit(&m)
			err := m.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
			if !errors.Is(err, wire.ErrInvalidMessage) {
				t.Errorf("error does not wrap ErrInvalidMessage")
			}
		})
	}
}

// artifact returns a valid artifact part after edit.
func artifact(edit func(*wire.Part)) wire.Part {
	p := wire.Part{Kind: "artifact", Name: "notes.md", MediaType: "text/markdown", Digest: digest, Size: int64p(42)}
	edit(&p)
	return p
}
