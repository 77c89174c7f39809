package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/cotal-go/cotal/internal/typo"
	"github.com/cotal-go/cotal/mesh/wire"
)

// MaxAgentNameLength bounds an agent file's name, in characters.
const MaxAgentNameLength = 128

// The kinds of participant an agent file can describe.
const (
	KindAgent    = "agent"    // a seat running a coding agent (the default)
	KindEndpoint = "endpoint" // a program that talks on the mesh without a harness
)

// The capabilities an agent file may grant. A role capability is
// CapRolePrefix followed by a role token. "admin" is never grantable here.
const (
	CapSpawn      = "spawn"
	CapRun        = "run"
	CapRolePrefix = "role:"
)

// AgentFile is a checked .cotal/agents/<name>.md: YAML frontmatter that
// describes one participant and a markdown body appended to its system prompt.
//
// The ACL lists are resolved and never nil: AllowSubscribe holds Subscribe
// when the file omits it, and AllowPublish is empty (deny) when omitted. Use
// Line to tell an omitted key from an empty one.
type AgentFile struct {
	Path string // the file it was read from

	Name        string
	Role        string // lowercase token, "" for none
	Kind        string // KindAgent or KindEndpoint
	Description string
	Tags        []string

	Subscribe      []string // channels joined at boot
	AllowSubscribe wire.ACL // read ACL; covers every Subscribe entry
	AllowPublish   wire.ACL // post ACL
	Quiet          []string // concrete, within AllowSubscribe, disjoint from Muted
	Muted          []string // concrete, within AllowSubscribe, disjoint from Quiet

	Model         string
	Variant       string
	Agent         string         // harness pin
	LaunchOptions map[string]any // kept raw for the harness
	Capabilities  []string       // CapSpawn, CapRun or CapRolePrefix+role
	Owner         string

	Launch Launch // how a seat of it runs: the keys a manager reads

	Meta   map[string]any // every key the spec does not name, as decoded YAML
	Prompt string         // the body after the closing ---, byte for byte

	lines map[string]int // frontmatter key -> line it was written on
}

// Launch is what an agent file says of running it as a seat, each key
// checked for its type where it was written.
type Launch struct {
	Command string   // agent: command: the program
	Args    []string // agent: command: its arguments, one list entry each
	Env     []string // KEY=VALUE pairs, sorted by key
	Cwd     string   // the directory it starts in
	Inject  *bool    // agent: command: whether arrivals are typed into it; nil when not said
	Ready   string   // ReadyMCP or ReadyOutput; "" when not said
	// Readiness is how long a seat of it has to come up before its spawn
	// reads uncertain; 0 when not said (the manager's, or its harness's).
	Readiness time.Duration
	// IdlePrompt is a command seat's idle prompt as a regular expression
	// over its screen's last line (checked to compile); "" when not said.
	IdlePrompt string
	// Worktree says each seat runs in a git worktree of its own.
	Worktree bool
	// Setup is what a seat's fresh worktree is given before its program
	// starts.
	Setup Setup
	// Budget is the tokens (in and out) a seat may spend before it needs
	// its person; 0 for no budget.
	Budget int64
}

// Readiness rules of a seat (key ready:).
const (
	ReadyMCP    = "mcp"    // its MCP client connected to its cotal mcp
	ReadyOutput = "output" // it drew its first output and still ran a moment later
)

// PersonaKey documents one key of an agent file.
type PersonaKey struct {
	Key, Type, Meaning string
}

// PersonaKeys are every key an agent file gives a meaning to, as the
// README's table and `cotal setup`'s seeded file list them. Any other key
// is kept as metadata.
var PersonaKeys = []PersonaKey{
	{"name", "string", "required: the file's name without .md; seats are named after it, so one token of a-z 0-9 _"},
	{"agent", "string", "the harness: claude (default), codex, opencode, or command (any program)"},
	{"role", "token", "the role tasks reach it by (`cotal send ask <role>`)"},
	{"kind", "string", "agent (default) or endpoint (a program on the mesh without a harness)"},
	{"description", "string", "one line for the roster's card"},
	{"tags", "list", "words for the card"},
	{"subscribe", "list", "channels joined at boot"},
	{"allowSubscribe", "list", "channels it may read (default: subscribe)"},
	{"allowPublish", "list", "channels it may post to (default: none)"},
	{"quiet", "list", "concrete channels within allowSubscribe to hold for its inbox read (checked; not applied to seats yet)"},
	{"muted", "list", "concrete channels within allowSubscribe it is not shown (checked; not applied to seats yet)"},
	{"capabilities", "list", "spawn, run, role:<role>: what it may ask of managers"},
	{"owner", "string", "the owner of its identity (checked; not applied yet)"},
	{"model", "string", "the harness's model, passed as --model"},
	{"variant", "string", "the harness's model variant (kept; not passed to a harness yet)"},
	{"launchOptions", "map", "a map kept for the harness (not passed to a harness yet)"},
	{"command", "string", "agent: command: the program to run"},
	{"args", "list", "agent: command: its arguments, one entry each (a string is refused)"},
	{"env", "map", "KEY: value pairs added to the seat's environment"},
	{"cwd", "string", "the directory the seat starts in"},
	{"inject", "bool", "agent: command: true types each message into its terminal (harnesses always get them typed; a command without it reads `cotal inbox` itself)"},
	{"ready", "string", "mcp or output: when the seat counts as ready (default: mcp for harnesses, output for a command)"},
	{"readiness", "duration", fmt.Sprintf("how long a seat has to come up before its spawn reads uncertain, like 90s or 3m (%s to %s; default: the manager's --readiness, else 30s, 3m for opencode)", MinReadiness, MaxReadiness)},
	{"idlePrompt", "string", "agent: command: a regular expression its screen's last line matches at its idle prompt; messages are typed in only then"},
	{"worktree", "bool", "true runs each seat in a git worktree of its own (.cotal/worktrees/<seat>, branch cotal/<seat>)"},
	{"setup", "map", "for a seat's fresh worktree: copy: files copied from the main checkout (.env); run: a shell command run in it first"},
	{"budget", "integer", "tokens (in and out) a seat may spend before it shows in NEEDS YOU"},
}

// Line returns the line of the file on which key was written, and false
// when the frontmatter omits it. A channel list entry is "subscribe[0]" and so on.
func (a *AgentFile) Line(key string) (int, bool) {
	l, ok := a.lines[key]
	return l, ok
}

// AgentFileError is a refused agent file. Error reads "<path>:<line>: why",
// the form editors jump to.
type AgentFileError struct {
	Path string
	Line int
	Err  error
}

func (e *AgentFileError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }
func (e *AgentFileError) Unwrap() error { return e.Err }

// AgentsDir is where a project keeps its agent files.
func AgentsDir(projectDir string) string { return filepath.Join(projectDir, ".cotal", "agents") }

// FindAgentFile returns the agent file for name in the project holding cwd
// (see ProjectDir), if there is one. It only looks; LoadAgentFile checks it.
func FindAgentFile(cwd, name string) (path string, ok bool) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return "", false
	}
	dir := ProjectDir(cwd)
	if dir == "" {
		return "", false
	}
	path = filepath.Join(AgentsDir(dir), name+".md")
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return path, true
}

// LoadAgentFile reads and checks an agent file. A file that breaks a rule is
// refused with an *AgentFileError naming the line; nothing is rewritten
// except the role, which is lowercased.
func LoadAgentFile(path string) (*AgentFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseAgentFile(path, b)
}

// agentParser carries what every refusal needs: the file, and the anchors an
// alias may point at.
type agentParser struct {
	path    string
	anchors Anchors
}

func (p *agentParser) errf(line int, format string, a ...any) error {
	return &AgentFileError{Path: p.path, Line: line, Err: fmt.Errorf(format, a...)}
}

func (p *agentParser) wrap(line int, err error) error {
	return &AgentFileError{Path: p.path, Line: line, Err: err}
}

func parseAgentFile(path string, b []byte) (*AgentFile, error) {
	p := &agentParser{path: path, anchors: Anchors{}}
	front, body, err := p.split(b)
	if err != nil {
		return nil, err
	}
	root, err := p.parse(front)
	if err != nil {
		return nil, err
	}
	a := &AgentFile{Path: path, Prompt: string(body), lines: map[string]int{}}
	if err := p.fields(a, root); err != nil {
		return nil, err
	}
	if err := p.meta(a, front); err != nil {
		return nil, err
	}
	if err := p.check(a); err != nil {
		return nil, err
	}
	return a, nil
}

// split cuts the file into its frontmatter and body. The frontmatter keeps
// its opening --- line so YAML line numbers are file line numbers.
func (p *agentParser) split(b []byte) (front, body []byte, err error) {
	b = bytes.TrimPrefix(b, []byte("\uFEFF"))
	first, _, _ := bytes.Cut(b, []byte("\n"))
	if !isFence(first) {
		return nil, nil, p.errf(1, "an agent file must start with a --- line that opens its YAML frontmatter")
	}
	off := len(first) + 1
	for off < len(b) {
		line, _, found := bytes.Cut(b[off:], []byte("\n"))
		if isFence(line) {
			end := off + len(line)
			if found {
				end++
			}
			return b[:off], b[end:], nil
		}
		off += len(line) + 1
	}
	return nil, nil, p.errf(1, "the frontmatter opened here is never closed by a --- line")
}

func isFence(line []byte) bool { return string(bytes.TrimRight(line, " \t\r")) == "---" }

// parse returns the frontmatter's top-level mapping, or nil when it is empty.
func (p *agentParser) parse(front []byte) (*ast.MappingNode, error) {
	f, err := parser.ParseBytes(front, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			return nil, p.errf(ye.GetToken().Position.Line, "%s", ye.GetMessage())
		}
		return nil, p.wrap(1, err)
	}
	var root ast.Node
	for _, d := range f.Docs {
		if d.Body == nil {
			continue
		}
		if root != nil {
			return nil, p.errf(line(d.Body), "the frontmatter holds a second YAML document; close it with --- instead")
		}
		root = d.Body
	}
	if root == nil {
		return nil, nil
	}
	p.anchors.Collect(root)
	switch n := p.anchors.Resolve(root).(type) {
	case *ast.MappingNode:
		return n, nil
	case *ast.MappingValueNode:
		return &ast.MappingNode{Values: []*ast.MappingValueNode{n}}, nil
	case *ast.NullNode:
		return nil, nil
	}
	return nil, p.errf(line(root), "the frontmatter must be a map of key: value lines, not a %s", describe(root))
}

func line(n ast.Node) int {
	if n == nil || n.GetToken() == nil {
		return 1
	}
	return n.GetToken().Position.Line
}

// describe names a node's shape for a refusal.
func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "map"
	case *ast.SequenceNode:
		return "list"
	case *ast.NullNode:
		return "null"
	}
	return "scalar"
}

// fields fills the named fields of a, checking each value's shape and each
// channel entry on its own line. Cross-field rules wait for check.
func (p *agentParser) fields(a *AgentFile, m *ast.MappingNode) error {
	if m == nil {
		return nil
	}
	for _, mv := range m.Values {
		kl := line(mv.Key)
		if mv.Key.IsMergeKey() {
			return p.errf(kl, "merge keys (<<) are not supported in an agent file; write the keys out")
		}
		k, ok := p.anchors.Resolve(mv.Key).(ast.ScalarNode)
		if !ok {
			return p.errf(kl, "a frontmatter key must be a plain word, not a %s", describe(mv.Key))
		}
		key := k.GetToken().Value
		a.lines[key] = kl
		var err error
		switch key {
		case "name":
			a.Name, err = p.str(key, kl, mv.Value)
		case "role":
			a.Role, err = p.str(key, kl, mv.Value)
		case "kind":
			a.Kind, err = p.str(key, kl, mv.Value)
		case "description":
			a.Description, err = p.str(key, kl, mv.Value)
		case "model":
			a.Model, err = p.str(key, kl, mv.Value)
		case "variant":
			a.Variant, err = p.str(key, kl, mv.Value)
		case "agent":
			a.Agent, err = p.str(key, kl, mv.Value)
		case "owner":
			a.Owner, err = p.str(key, kl, mv.Value)
		case "tags":
			a.Tags, _, err = p.list(key, kl, mv.Value)
		case "capabilities":
			a.Capabilities, err = p.capabilities(kl, mv.Value)
		case "subscribe":
			a.Subscribe, err = p.channels(key, kl, mv.Value, a.lines)
		case "allowSubscribe":
			a.AllowSubscribe, err = p.channels(key, kl, mv.Value, a.lines)
		case "allowPublish":
			a.AllowPublish, err = p.channels(key, kl, mv.Value, a.lines)
		case "quiet":
			a.Quiet, err = p.channels(key, kl, mv.Value, a.lines)
		case "muted":
			a.Muted, err = p.channels(key, kl, mv.Value, a.lines)
		case "launchOptions":
			switch v := p.anchors.Resolve(mv.Value).(type) {
			case *ast.MappingNode, *ast.MappingValueNode, *ast.NullNode:
			default:
				err = p.errf(kl, "launchOptions must be a map, not a %s", describe(v))
			}
		case "command":
			a.Launch.Command, err = p.str(key, kl, mv.Value)
		case "cwd":
			a.Launch.Cwd, err = p.str(key, kl, mv.Value)
		case "args":
			a.Launch.Args, _, err = p.list(key, kl, mv.Value)
		case "env":
			a.Launch.Env, err = p.env(kl, mv.Value)
		case "inject":
			a.Launch.Inject, err = p.boolean(key, kl, mv.Value)
		case "ready":
			a.Launch.Ready, err = p.str(key, kl, mv.Value)
			if err == nil && a.Launch.Ready != ReadyMCP && a.Launch.Ready != ReadyOutput {
				err = p.errf(kl, "ready %q is not %s or %s", a.Launch.Ready, ReadyMCP, ReadyOutput)
			}
		case "readiness":
			a.Launch.Readiness, err = p.readiness(kl, mv.Value)
		case "idlePrompt":
			a.Launch.IdlePrompt, err = p.str(key, kl, mv.Value)
			if err == nil && a.Launch.IdlePrompt != "" {
				if _, rerr := regexp.Compile(a.Launch.IdlePrompt); rerr != nil {
					err = p.errf(kl, "idlePrompt %q is not a regular expression: %v", a.Launch.IdlePrompt, rerr)
				}
			}
		case "worktree":
			var b *bool
			if b, err = p.boolean(key, kl, mv.Value); b != nil {
				a.Launch.Worktree = *b
			}
		case "setup":
			a.Launch.Setup, err = p.setup(kl, mv.Value)
		case "budget":
			a.Launch.Budget, err = p.budget(kl, mv.Value)
		default:
			// Any other key is kept as metadata, unless it is a typo of a
			// key that means something: a misspelt allowPublish must not
			// silently leave the agent unable to post.
			if known := nearKey(key); known != "" {
				err = p.errf(kl, "unknown key %q: did you mean %s?", key, known)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Bounds of a readiness an agent file or a spawn may ask for.
const (
	MinReadiness = time.Second
	MaxReadiness = time.Hour
)

// readiness reads a duration like 90s or 3m, within the bounds.
func (p *agentParser) readiness(kl int, n ast.Node) (time.Duration, error) {
	s, err := p.str("readiness", kl, n)
	if err != nil || s == "" {
		return 0, err
	}
	d, perr := time.ParseDuration(s)
	if perr != nil {
		return 0, p.errf(kl, "readiness %q is not a duration like 90s or 3m", s)
	}
	if d < MinReadiness || d > MaxReadiness {
		return 0, p.errf(kl, "readiness %s is outside %s to %s", d, MinReadiness, MaxReadiness)
	}
	return d, nil
}

// str reads a scalar as the text written; null reads as "".
func (p *agentParser) str(key string, kl int, n ast.Node) (string, error) {
	switch v := p.anchors.Resolve(n).(type) {
	case *ast.NullNode:
		return "", nil
	case *ast.StringNode:
		return v.Value, nil
	case *ast.LiteralNode:
		return v.Value.Value, nil
	case ast.ScalarNode:
		return v.GetToken().Value, nil
	default:
		return "", p.errf(kl, "%s must be a string, not a %s", key, describe(v))
	}
}

// boolean reads true or false, and nothing else: yes, on and 1 are YAML
// 1.1 spellings a reader cannot tell from a typo.
func (p *agentParser) boolean(key string, kl int, n ast.Node) (*bool, error) {
	switch v := p.anchors.Resolve(n).(type) {
	case *ast.NullNode:
		return nil, nil
	case *ast.BoolNode:
		b := v.Value
		return &b, nil
	case ast.ScalarNode:
		return nil, p.errf(kl, "%s must be true or false, not %q", key, v.GetToken().Value)
	default:
		return nil, p.errf(kl, "%s must be true or false, not a %s", key, describe(v))
	}
}

// env reads a map of variable names to scalar values as sorted KEY=VALUE
// pairs.
func (p *agentParser) env(kl int, n ast.Node) ([]string, error) {
	var pairs []*ast.MappingValueNode
	switch v := p.anchors.Resolve(n).(type) {
	case *ast.NullNode:
		return nil, nil
	case *ast.MappingNode:
		pairs = v.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{v}
	default:
		return nil, p.errf(kl, "env must be a map of NAME: value lines, not a %s", describe(v))
	}
	vals := map[string]string{}
	for _, mv := range pairs {
		el := line(mv.Key)
		k, ok := p.anchors.Resolve(mv.Key).(ast.ScalarNode)
		if !ok || mv.Key.IsMergeKey() {
			return nil, p.errf(el, "env: a variable name must be a plain word")
		}
		name := k.GetToken().Value
		if name == "" || strings.ContainsAny(name, "= \t\x00") {
			return nil, p.errf(el, "env: %q is not a variable name", name)
		}
		val, err := p.str("env "+name, el, mv.Value)
		if err != nil {
			return nil, err
		}
		vals[name] = val
	}
	out := make([]string, 0, len(vals))
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		out = append(out, k+"="+vals[k])
	}
	return out, nil
}

// list reads a list of scalars and the line of each entry. A null value
// (the key with nothing after it) is an empty list, not an omitted one.
func (p *agentParser) list(key string, kl int, n ast.Node) ([]string, []int, error) {
	out, lines := []string{}, []int{}
	switch v := p.anchors.Resolve(n).(type) {
	case *ast.NullNode:
		return out, lines, nil
	case *ast.SequenceNode:
		for _, e := range v.Values {
			el := line(e)
			r := p.anchors.Resolve(e)
			if _, null := r.(*ast.NullNode); null {
				return nil, nil, p.errf(el, "%s has an empty entry", key)
			}
			s, err := p.str(key+" entry", el, r)
			if err != nil {
				return nil, nil, err
			}
			out, lines = append(out, s), append(lines, el)
		}
		return out, lines, nil
	default:
		return nil, nil, p.errf(kl, "%s must be a list such as [a, b], not a %s", key, describe(v))
	}
}

// channels reads a channel list, refusing (never rewriting) an entry that is
// not a valid channel name or pattern. Each entry's line is kept under
// "key[i]" for the cross-field checks.
func (p *agentParser) channels(key string, kl int, n ast.Node, lines map[string]int) ([]string, error) {
	l, ls, err := p.list(key, kl, n)
	if err != nil {
		return nil, err
	}
	for i, ch := range l {
		if err := wire.ValidateChannel(ch); err != nil {
			return nil, p.wrap(ls[i], fmt.Errorf("%s: %w", key, err))
		}
		lines[fmt.Sprintf("%s[%d]", key, i)] = ls[i]
	}
	return l, nil
}

// capabilities reads the grants, refusing admin and anything unknown.
func (p *agentParser) capabilities(kl int, n ast.Node) ([]string, error) {
	l, ls, err := p.list("capabilities", kl, n)
	if err != nil {
		return nil, err
	}
	for i, c := range l {
		switch {
		case c == CapSpawn, c == CapRun:
		case strings.EqualFold(c, "admin"):
			return nil, p.errf(ls[i], "capability %q is never grantable in an agent file: admin belongs to the space's operator", c)
		case strings.HasPrefix(c, CapRolePrefix):
			r := strings.ToLower(strings.TrimPrefix(c, CapRolePrefix))
			if !wire.ValidToken(r) {
				return nil, p.errf(ls[i], "capability %q: the role must be one token of a-z 0-9 _", c)
			}
			l[i] = CapRolePrefix + r
		default:
			return nil, p.errf(ls[i], "unknown capability %q: use %s, %s or %s<role>", c, CapSpawn, CapRun, CapRolePrefix)
		}
	}
	return l, nil
}

// meta decodes the whole frontmatter once, aliases and all, and keeps the
// raw launch options and every key the spec does not name.
func (p *agentParser) meta(a *AgentFile, front []byte) error {
	var raw map[string]any
	if err := yaml.Unmarshal(front, &raw); err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			return p.errf(ye.GetToken().Position.Line, "%s", ye.GetMessage())
		}
		return p.wrap(1, err)
	}
	for k, v := range raw {
		if k == "launchOptions" {
			if m, ok := v.(map[string]any); ok {
				a.LaunchOptions = m
			}
			continue
		}
		if agentKeys[k] {
			continue
		}
		if a.Meta == nil {
			a.Meta = map[string]any{}
		}
		a.Meta[k] = v
	}
	return nil
}

// nearKey returns the key of meaning that key is one typo away from (one
// letter added, dropped, changed, two swapped, or only the case differs),
// or "" when key is one of them or near none.
func nearKey(key string) string {
	if agentKeys[key] {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(agentKeys)) {
		if typo.Distance(k, key) <= 1 {
			return k
		}
	}
	return ""
}

// agentKeys are the frontmatter keys with a field of their own.
var agentKeys = func() map[string]bool {
	m := make(map[string]bool, len(PersonaKeys))
	for _, k := range PersonaKeys {
		m[k.Key] = true
	}
	return m
}()

// check applies the rules that span fields and fills the defaults.
func (p *agentParser) check(a *AgentFile) error {
	nl, ok := a.Line("name")
	if !ok || a.Name == "" {
		return p.errf(max(nl, 1), "name is required (it must be the file's name without .md)")
	}
	if n := utf8.RuneCountInString(a.Name); n > MaxAgentNameLength {
		return p.errf(nl, "name is %d characters, the limit is %d", n, MaxAgentNameLength)
	}
	if base := strings.TrimSuffix(filepath.Base(a.Path), ".md"); a.Name != base {
		return p.errf(nl, "name %q does not match the file name %q (rename one of them)", a.Name, base)
	}

	if a.Kind == "" {
		a.Kind = KindAgent
	} else if a.Kind != KindAgent && a.Kind != KindEndpoint {
		kl, _ := a.Line("kind")
		return p.errf(kl, "kind %q is not %s or %s", a.Kind, KindAgent, KindEndpoint)
	}

	if a.Role != "" {
		a.Role = strings.ToLower(a.Role)
		if !wire.ValidToken(a.Role) {
			rl, _ := a.Line("role")
			return p.errf(rl, "role %q must be one token of a-z 0-9 _ (at most %d)", a.Role, wire.MaxTokenLength)
		}
	}

	if a.Subscribe == nil {
		a.Subscribe = []string{}
	}
	if al, given := a.Line("allowSubscribe"); !given {
		a.AllowSubscribe = wire.SameAsSubscribe(a.Subscribe)
	} else if len(a.AllowSubscribe) == 0 && len(a.Subscribe) > 0 {
		return p.errf(al, "allowSubscribe is empty but subscribe lists %s: an empty read ACL covers nothing (omit allowSubscribe to default it to subscribe)", strings.Join(a.Subscribe, ", "))
	}
	for i, ch := range a.Subscribe {
		if !wire.Covered(a.AllowSubscribe, ch) {
			return p.errf(a.lines[fmt.Sprintf("subscribe[%d]", i)], "subscribe: %q is not within allowSubscribe [%s]", ch, strings.Join(a.AllowSubscribe, ", "))
		}
	}
	if a.AllowPublish == nil {
		a.AllowPublish = wire.ACL{}
	}

	quiet := map[string]bool{}
	for _, l := range []struct {
		key string
		chs []string
	}{{"quiet", a.Quiet}, {"muted", a.Muted}} {
		for i, ch := range l.chs {
			el := a.lines[fmt.Sprintf("%s[%d]", l.key, i)]
			switch {
			case !wire.IsConcrete(ch):
				return p.errf(el, "%s: %q is a pattern; name a concrete channel", l.key, ch)
			case !wire.Covered(a.AllowSubscribe, ch):
				return p.errf(el, "%s: %q is not within allowSubscribe [%s]", l.key, ch, strings.Join(a.AllowSubscribe, ", "))
			case l.key == "muted" && quiet[ch]:
				return p.errf(el, "%q is both quiet and muted; pick one", ch)
			}
			if l.key == "quiet" {
				quiet[ch] = true
			}
		}
	}
	return nil
}
