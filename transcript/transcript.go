// Package transcript reads what a coding-agent harness writes of its own
// session, a JSON line per event, into a seat's cost and activity: tokens
// in and out, cost where the harness says it, tool calls, turns, and when
// its model last answered. It knows Claude Code's transcript and Codex's
// rollout file, reads a growing file from where it left off, and skips
// whatever it does not know. It imports no package of this module.
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// The formats a Reader reads.
const (
	Claude = "claude" // Claude Code: ~/.claude/projects/<dir>/<session>.jsonl
	Codex  = "codex"  // Codex: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl
)

// Usage is a session's cost and activity so far.
type Usage struct {
	In         int64 // input tokens not read from a cache (cache writes not included)
	Out        int64 // output tokens (reasoning included)
	CacheRead  int64 // input tokens read from the prompt cache
	CacheWrite int64 // input tokens written to the prompt cache
	// CostUSD is the harness's own reckoning of the session's cost;
	// CostKnown says it gave one.
	CostUSD   float64
	CostKnown bool
	ToolCalls int
	Turns     int       // prompts that began a turn (a person's, or a message handed in)
	Answered  time.Time // when its model's last message was written; zero for none yet
}

// Tokens is what a budget counts: input (cache writes included) and output;
// reads from the cache are left out, as they are cheap and repeat.
func (u Usage) Tokens() int64 { return u.In + u.CacheWrite + u.Out }

// maxRead bounds what one Update reads; the rest waits for the next.
const maxRead = 4 << 20

// maxLine is the longest line kept whole; a longer one is skipped.
const maxLine = 8 << 20

// Reader follows one transcript file. Not safe for concurrent use.
type Reader struct {
	format  string
	path    string
	off     int64
	partial []byte // a line not yet ended
	skip    bool   // in a line too long to keep, until its end
	u       Usage
	claude  map[string][4]int64 // Claude Code message id -> its usage, which later lines of it repeat
	tools   map[string]bool     // tool call ids counted
}

// ErrFormat is returned by NewReader for a format it does not read.
var ErrFormat = errors.New("unknown transcript format")

// NewReader follows the transcript at path, written in format.
func NewReader(format, path string) (*Reader, error) {
	if format != Claude && format != Codex {
		return nil, fmt.Errorf("%w %q", ErrFormat, format)
	}
	return &Reader{format: format, path: path, claude: map[string][4]int64{}, tools: map[string]bool{}}, nil
}

// Path is the file the reader follows.
func (r *Reader) Path() string { return r.path }

// Update reads what was written since the last call (at most maxRead of
// it) and returns the usage so far. The file is opened without following
// a symlink and must be a regular file.
func (r *Reader) Update() (Usage, error) {
	f, err := os.OpenFile(r.path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return r.u, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return r.u, err
	}
	if !st.Mode().IsRegular() {
		return r.u, fmt.Errorf("transcript %s is not a regular file", r.path)
	}
	if st.Size() < r.off { // rewritten: start again
		*r = Reader{format: r.format, path: r.path, claude: map[string][4]int64{}, tools: map[string]bool{}}
	}
	if _, err := f.Seek(r.off, io.SeekStart); err != nil {
		return r.u, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRead))
	if err != nil {
		return r.u, err
	}
	r.off += int64(len(b))
	r.Feed(b)
	return r.u, nil
}

// Feed reads bytes of the transcript as if appended to what was read.
func (r *Reader) Feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if !r.skip {
				r.partial = append(r.partial, b...)
				if len(r.partial) > maxLine {
					r.partial, r.skip = nil, true
				}
			}
			return
		}
		line := b[:i]
		b = b[i+1:]
		if r.skip {
			r.skip = false
			continue
		}
		if len(r.partial) > 0 {
			line = append(r.partial, line...)
			r.partial = nil
		}
		r.line(line)
	}
}

// Usage is the usage read so far.
func (r *Reader) Usage() Usage { return r.u }

func (r *Reader) line(b []byte) {
	if r.format == Claude {
		r.claudeLine(b)
	} else {
		r.codexLine(b)
	}
}

// claudeLine reads one line of Claude Code's transcript. An assistant
// message is written a line per content block, each repeating the
// message's usage, so usage is counted once per message id.
func (r *Reader) claudeLine(b []byte) {
	var l struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
		Sidechain bool      `json:"isSidechain"`
		Meta      bool      `json:"isMeta"`
		Message   struct {
			ID      string          `json:"id"`
			Content json.RawMessage `json:"content"`
			Usage   *struct {
				In         int64 `json:"input_tokens"`
				Out        int64 `json:"output_tokens"`
				CacheRead  int64 `json:"cache_read_input_tokens"`
				CacheWrite int64 `json:"cache_creation_input_tokens"`
			} `json:"usage"`
		} `json:"message"`
		Cost *float64 `json:"totalCostUSD"`
	}
	if json.Unmarshal(b, &l) != nil {
		return
	}
	switch l.Type {
	case "assistant":
		if u := l.Message.Usage; u != nil && l.Message.ID != "" {
			old := r.claude[l.Message.ID]
			now := [4]int64{u.In, u.Out, u.CacheRead, u.CacheWrite}
			r.claude[l.Message.ID] = now
			r.u.In += now[0] - old[0]
			r.u.Out += now[1] - old[1]
			r.u.CacheRead += now[2] - old[2]
			r.u.CacheWrite += now[3] - old[3]
		}
		var blocks []struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if json.Unmarshal(l.Message.Content, &blocks) == nil {
			for _, c := range blocks {
				if c.Type == "tool_use" && !r.tools[c.ID] {
					r.tools[c.ID] = true
					r.u.ToolCalls++
				}
			}
		}
		if !l.Timestamp.IsZero() {
			r.u.Answered = l.Timestamp
		}
	case "user":
		if l.Sidechain || l.Meta {
			return
		}
		if prompt(l.Message.Content) {
			r.u.Turns++
		}
	case "cost-state":
		if l.Cost != nil {
			r.u.CostUSD, r.u.CostKnown = *l.Cost, true
		}
	}
}

// prompt reports whether a user message's content is words (a prompt),
// not tool results.
func prompt(content json.RawMessage) bool {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s != ""
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return false
	}
	for _, c := range blocks {
		if c.Type == "tool_result" {
			return false
		}
	}
	return len(blocks) > 0
}

// codexLine reads one line of Codex's rollout file: its token counts are
// running totals, its turns begin with task_started.
func (r *Reader) codexLine(b []byte) {
	var l struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
		Payload   struct {
			Type   string `json:"type"`
			Role   string `json:"role"`
			CallID string `json:"call_id"`
			ID     string `json:"id"`
			Info   *struct {
				Total struct {
					In         int64 `json:"input_tokens"`
					Cached     int64 `json:"cached_input_tokens"`
					CacheWrite int64 `json:"cache_write_input_tokens"`
					Out        int64 `json:"output_tokens"`
				} `json:"total_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	if json.Unmarshal(b, &l) != nil {
		return
	}
	p := l.Payload
	switch {
	case l.Type == "event_msg" && p.Type == "token_count" && p.Info != nil:
		t := p.Info.Total
		r.u.In, r.u.CacheRead, r.u.CacheWrite, r.u.Out = max(t.In-t.Cached-t.CacheWrite, 0), t.Cached, t.CacheWrite, t.Out
	case l.Type == "event_msg" && p.Type == "task_started":
		r.u.Turns++
	case l.Type == "response_item" && (p.Type == "function_call" || p.Type == "custom_tool_call" || p.Type == "local_shell_call" || p.Type == "web_search_call"):
		id := p.CallID
		if id == "" {
			id = p.ID
		}
		if id == "" || !r.tools[id] {
			if id != "" {
				r.tools[id] = true
			}
			r.u.ToolCalls++
		}
	case l.Type == "response_item" && p.Type == "message" && p.Role == "assistant":
		if !l.Timestamp.IsZero() {
			r.u.Answered = l.Timestamp
		}
	}
}
