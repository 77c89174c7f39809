package worktree

import (
	"strconv"
	"strings"
)

// ReviewHelp is the head of a review file: how a person writes comments
// into it. Every line of it starts with #, and lines before the first
// `diff --git` that start with # are not comments.
const ReviewHelp = `# Review: write your comments on lines of their own under the line of the
# diff they are about; a comment may take several lines. A line that is
# not part of the diff is a comment; start it with > if it would begin
# with a space, + or - (the > is dropped). A comment under a file's
# header, before its first @@, is about the whole file. Save and quit to
# send every comment to the seat as one message; write none to send nothing.
`

// Comment is one comment a person wrote in a review file.
type Comment struct {
	Path string `json:"path"`
	// Line is the line in the seat's version of the file (OldLine in the
	// base's, for a removed line); 0 for a comment on the whole file.
	Line    int    `json:"line,omitempty"`
	OldLine int    `json:"oldLine,omitempty"`
	Removed bool   `json:"removed,omitempty"` // it is about a removed line
	Code    string `json:"code,omitempty"`    // the diff line it is under, without its +, - or space
	Text    string `json:"text"`
}

// ReviewFile is the text a person reviews a diff in.
func ReviewFile(d *Diff) string {
	return ReviewHelp + "#\n# " + d.Branch + " against " + d.Base + "\n\n" + d.Patch
}

// ParseReview reads the comments out of a review file: each run of lines
// that are not diff lines, under the diff line it follows.
func ParseReview(text string) []Comment {
	var (
		out            []Comment
		path           string
		inDiff, inHunk bool
		oldNo, newNo   int
		last           *Comment // the place the next comment attaches to
		open           *Comment // the comment being written
		header         = true
	)
	flush := func() {
		if open != nil {
			open.Text = strings.TrimSpace(open.Text)
			if open.Text != "" {
				out = append(out, *open)
			}
			open = nil
		}
	}
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if header && strings.HasPrefix(l, "#") {
			continue
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			flush()
			header, inDiff, inHunk = false, true, false
			path = diffPath(l)
			last = &Comment{Path: path}
			continue
		case inDiff && !inHunk && isFileHeader(l):
			if p, ok := strings.CutPrefix(l, "+++ b/"); ok {
				path = p
				last = &Comment{Path: path}
			}
			continue
		case inDiff && strings.HasPrefix(l, "@@ "):
			flush()
			inHunk = true
			oldNo, newNo = hunkStart(l)
			last = &Comment{Path: path, Line: newNo, OldLine: oldNo}
			continue
		case inHunk && l != "" && (l[0] == ' ' || l[0] == '+' || l[0] == '-'):
			flush()
			c := &Comment{Path: path, Code: l[1:]}
			switch l[0] {
			case ' ':
				c.Line, c.OldLine = newNo, oldNo
				oldNo++
				newNo++
			case '+':
				c.Line = newNo
				newNo++
			case '-':
				c.OldLine, c.Removed = oldNo, true
				oldNo++
			}
			last = c
			continue
		case inHunk && strings.HasPrefix(l, `\ `):
			continue // "\ No newline at end of file"
		}
		if header || last == nil {
			continue
		}
		if strings.TrimSpace(l) == "" {
			if open != nil {
				open.Text += "\n"
			}
			continue
		}
		if open == nil {
			c := *last
			open = &c
		}
		open.Text += strings.TrimPrefix(l, ">") + "\n"
	}
	flush()
	return out
}

// isFileHeader reports whether l is one of the lines git writes between
// `diff --git` and a file's first hunk.
func isFileHeader(l string) bool {
	for _, p := range []string{"index ", "--- ", "+++ ", "new file mode ", "deleted file mode ", "old mode ", "new mode ",
		"similarity index ", "rename from ", "rename to ", "copy from ", "copy to ", "Binary files "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// diffPath is the file a `diff --git a/x b/x` line names (its b side).
func diffPath(l string) string {
	rest := strings.TrimPrefix(l, "diff --git ")
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// hunkStart reads the first old and new line numbers of an @@ line.
func hunkStart(l string) (oldNo, newNo int) {
	f := strings.Fields(l)
	if len(f) < 3 {
		return 0, 0
	}
	num := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	return num(f[1]), num(f[2])
}
