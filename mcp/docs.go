package mcp

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
)

// docsFS holds the pages cotal_docs serves: how this mesh works, in the
// words a model needs to use the tools well.
//
//go:embed docs/*.md
var docsFS embed.FS

// maxDocMatches bounds a cotal_docs query's answer.
const maxDocMatches = 12

type docsArgs struct {
	Page  string `json:"page,omitempty" schema:"maxLength=64" desc:"the page to read; without page and query, the list of pages"`
	Query string `json:"query,omitempty" schema:"maxLength=200" desc:"words to look for; the paragraphs holding all of them are returned (in page, when given)"`
}

// docPage is one page: its name (the file's, without .md), title and text.
type docPage struct{ name, title, text string }

func docPages() []docPage {
	ents, _ := docsFS.ReadDir("docs")
	var out []docPage
	for _, e := range ents {
		b, err := docsFS.ReadFile(path.Join("docs", e.Name()))
		if err != nil {
			continue
		}
		text := string(b)
		title, _, _ := strings.Cut(text, "\n")
		out = append(out, docPage{name: strings.TrimSuffix(e.Name(), ".md"), title: strings.TrimPrefix(title, "# "), text: text})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// offline is a tool that needs no mesh.
func offline[A any](name, desc string, fn func(ctx context.Context, a A) (string, error)) *tool {
	var zero A
	p := paramsOf(zero)
	return &tool{name: name, desc: desc, readOnly: true, params: p, run: func(ctx context.Context, _ *Server, raw json.RawMessage) (string, error) {
		var a A
		if err := decodeArgs(name, p, raw, &a); err != nil {
			return "", err
		}
		return fn(ctx, a)
	}}
}

func toolDocs(_ context.Context, a docsArgs) (string, error) {
	pages := docPages()
	var names []string
	for _, p := range pages {
		names = append(names, p.name)
	}
	page, query := strings.TrimSpace(a.Page), strings.TrimSpace(a.Query)
	if page != "" {
		var found []docPage
		for _, p := range pages {
			if p.name == page {
				found = append(found, p)
			}
		}
		if len(found) == 0 {
			return "", refusef("No docs page %q; the pages are: %s.", page, strings.Join(names, ", "))
		}
		pages = found
		if query == "" {
			return found[0].text, nil
		}
	}
	if query == "" {
		var b strings.Builder
		b.WriteString("Docs pages (cotal_docs page=<name>; query=<words> searches them):\n")
		for _, p := range pages {
			fmt.Fprintf(&b, "- %s: %s\n", p.name, p.title)
		}
		return strings.TrimRight(b.String(), "\n"), nil
	}
	words := strings.Fields(strings.ToLower(query))
	var hits []string
	for _, p := range pages {
		for _, para := range strings.Split(p.text, "\n\n") {
			low := strings.ToLower(para)
			all := true
			for _, w := range words {
				all = all && strings.Contains(low, w)
			}
			if all && len(hits) < maxDocMatches {
				hits = append(hits, "["+p.name+"] "+strings.TrimSpace(para))
			}
		}
	}
	if len(hits) == 0 {
		return fmt.Sprintf("Nothing in the docs holds %q; the pages are: %s.", query, strings.Join(names, ", ")), nil
	}
	return strings.Join(hits, "\n\n"), nil
}
