// Package clirender is how the cotal commands print what they did: each
// command's result as the lines a person reads, and the JSON shapes its
// --json prints. It decides nothing: main calls a package for the result,
// then one function here to say it.
package clirender

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cotal-go/cotal/internal/cliargs"
)

// JSON prints v as indented JSON: what every --json prints.
func JSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintln(w, string(b))
}

// Dash is s, or "-" for an empty table cell.
func Dash(s string) string { return OrDefault(s, "-") }

// OrDefault is s, or otherwise when s is empty.
func OrDefault(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// ListOrNone is the list joined with commas, or "(none)".
func ListOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}

// NonNil is l, or an empty list where l is nil, so JSON prints [].
func NonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// DidYouMean is "; did you mean #a or #b?" for the close names, else
// otherwise (cliargs.DidYouMean).
func DidYouMean(sigil string, close []string, otherwise string) string {
	return cliargs.DidYouMean(sigil, close, otherwise)
}
