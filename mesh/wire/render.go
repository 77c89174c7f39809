package wire

import "strings"

// indentBreaks maps every line-break class to a newline plus two spaces; CRLF comes first so it counts as one break.
var indentBreaks = strings.NewReplacer(
	"\r\n", "\n  ",
	"\r", "\n  ",
	"\n", "\n  ",
	"\v", "\n  ",
	"\f", "\n  ",
	"\u0085", "\n  ",
	"\u2028", "\n  ",
	"\u2029", "\n  ",
)

// IndentBody keeps peer text off column 0, so only the connector can start a line a model reads as a new item.
func IndentBody(s string) string { return indentBreaks.Replace(s) }

// labelCleaner drops brackets and flattens every line-break class to a space.
var labelCleaner = strings.NewReplacer(
	"[", "",
	"]", "",
	"\r\n", " ",
	"\r", " ",
	"\n", " ",
	"\v", " ",
	"\f", " ",
	"\u0085", " ",
	"\u2028", " ",
	"\u2029", " ",
)

// CleanLabel makes a peer-chosen name, role or channel label safe inside a [..] item header: no brackets to close it early, no line breaks to forge a new line.
func CleanLabel(s string) string { return strings.TrimSpace(labelCleaner.Replace(s)) }

// SenderLabel is who sent a message as a person or a model sees it: the
// name comes from the authenticated principal of the subject, and from.name
// is shown only when it is that principal's own name (it is the actor on
// every identity the space mints), so no sender can appear as another. The
// role is the sender's word, shown cleaned.
func SenderLabel(sender Principal, from Sender) string {
	name := sender.Actor
	if n := CleanLabel(from.Name); strings.EqualFold(n, sender.Actor) {
		name = n
	}
	if role := CleanLabel(from.Role); role != "" {
		return name + "/" + role
	}
	return name
}
