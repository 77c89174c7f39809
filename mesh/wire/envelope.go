package wire

import "strings"

// Sender is the envelope's from block; ID must equal the principal the subject authenticates.
type Sender struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Role string `json:"role,omitempty"`
}

// Message is the CotalMessage envelope; exactly one of Channel, To and ToService routes it, and receivers overwrite them from the subject.
type Message struct {
	ID        string   `json:"id"`
	TS        int64    `json:"ts"`
	Space     string   `json:"space"`
	From      Sender   `json:"from"`
	Channel   string   `json:"channel,omitempty"`
	To        string   `json:"to,omitempty"`
	ToService string   `json:"toService,omitempty"`
	Mentions  []string `json:"mentions,omitempty"`
	Parts     []Part   `json:"parts"`
	ReplyTo   string   `json:"replyTo,omitempty"`
	ContextID string   `json:"contextId,omitempty"`
}

// TextParts is the default content of a message typed as plain text.
func TextParts(text string) []Part {
	return []Part{{Kind: PartText, Text: text}}
}

// Text is what a reader shows for the message: its text parts, one per line.
func (m Message) Text() string {
	var texts []string
	for _, p := range m.Parts {
		if p.Kind == PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// NormalizeMentions gives mentions the one spelling receivers compare against: trimmed, lowercased, deduplicated, nil when empty.
func NormalizeMentions(in []string) []string {
	var out []string
	seen := make(map[string]bool, len(in))
	for _, m := range in {
		m = strings.ToLower(strings.TrimSpace(m))
		if m == "" || seen[m] {
			continue
		}
		seen[m] = true
		out = append(out, m)
	}
	return out
}
