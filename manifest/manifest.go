// Package manifest reads cotal.yaml, a whole mesh in one file (which
// agents, which channels, who may read and post where), and turns it into
// values: each agent resolved to the persona a seat is spawned from, its
// rights inverted from the channels' lists, and the plan that takes a
// running mesh from what was applied to what the file says. It starts
// nothing; package manifest/apply does.
package manifest

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// FileName is the manifest's name in a project folder.
const FileName = "cotal.yaml"

// APIVersion and Kind are the only header this reader accepts.
const (
	APIVersion = "cotal/v1"
	Kind       = "Mesh"
)

// MaxCount bounds how many seats one agent entry may run.
const MaxCount = 32

// Persona permissions: whether an agent file's own channel lists add to
// the rights the manifest's channels give (include) or are left out
// (reject, the default: the manifest alone decides).
const (
	PersonaReject  = "reject"
	PersonaInclude = "include"
)

// Manifest is a checked cotal.yaml.
type Manifest struct {
	Path  string // absolute
	Dir   string // the folder relative paths start from
	Space string
	Open  bool // broker.auth: false
	// Servers is broker.servers: an existing NATS server or cluster the
	// mesh lives on (up --url); empty runs the embedded broker.
	Servers  []string
	Defaults mesh.ChannelConfig
	Agents   []*Agent   // by name
	Channels []*Channel // by name
	// Notes are what the file leaves out that a reader may expect, said
	// by plan (an agent file's channel lists not used, say).
	Notes []string
}

// Channel is one channels: entry: its registry fields and who may do what.
type Channel struct {
	Name           string
	Config         mesh.ChannelConfig
	Subscribe      []string // agent names joined at boot
	AllowSubscribe []string // agent names that may read
	AllowPublish   []string // agent names that may post
}

// Agent is one agents: entry resolved: what runs and with which rights.
type Agent struct {
	Name    string
	Kind    string // config.KindAgent (a seat) or config.KindEndpoint (a credential only)
	Persona string // the agent file it builds on, "" when inline
	Count   int
	counted bool // count: was written, so the seats are numbered even for one

	Harness      string // claude, codex, opencode or command
	Command      string
	Args         []string
	Env          []string // KEY=VALUE, sorted
	Cwd          string   // absolute, "" for the manager's default
	Model        string
	Variant      string
	Role         string
	Description  string
	Instructions string // the system prompt: the persona's body
	Prompt       string // the first message a seat is sent
	Capabilities []string

	Subscribe      []string
	AllowSubscribe wire.ACL // never nil once read: [] reads nothing
	AllowPublish   wire.ACL // never nil once read: [] posts nothing

	file *config.AgentFile // the persona, for the keys the manifest cannot set
}

// Seats are the names the agent's seats take: its name, or name_1 ...
// name_N when the entry has a count, even a count of one: so raising or
// lowering the count keeps the seats that stay, and only the ones added
// or dropped start or stop.
func (a *Agent) Seats() []string {
	if a.Kind == config.KindEndpoint {
		return nil
	}
	if !a.counted {
		return []string{a.Name}
	}
	out := make([]string, a.Count)
	for i := range out {
		out[i] = a.Name + "_" + strconv.Itoa(i+1)
	}
	return out
}

// Agent returns the agent named, or nil.
func (m *Manifest) Agent(name string) *Agent {
	for _, a := range m.Agents {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Find returns the manifest for the folder cwd: cotal.yaml there or in
// the nearest folder above it that has one, found the way .cotal/ is.
func Find(cwd string) (string, bool) {
	for dir := cwd; ; {
		p := filepath.Join(dir, FileName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", false
		}
		dir = up
	}
}

// Locate names the manifest a command reads: file itself; for a folder,
// the one Find finds from it; for "", the one Find finds from cwd. None
// found is an error that says where it looked and how to name one.
func Locate(file, cwd string) (string, error) {
	if file == "" {
		found, ok := Find(cwd)
		if !ok {
			return "", fmt.Errorf("no %s here or in a folder above: name one with -f FILE, or write one with `cotal init`", FileName)
		}
		return found, nil
	}
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		found, ok := Find(file)
		if !ok {
			return "", fmt.Errorf("no %s in %s or a folder above it", FileName, file)
		}
		return found, nil
	}
	return file, nil
}

// Load reads and checks a manifest. A file that breaks a rule is refused
// with an *Error naming its line and column; nothing is started or written.
func Load(path string) (*Manifest, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	return Parse(abs, b)
}

var topKeys = []string{"apiVersion", "kind", "space", "broker", "agent", "personaPermissions", "defaults", "agents", "channels", "runtime"}

// Parse checks b, the contents of the manifest at path (absolute).
func Parse(path string, b []byte) (*Manifest, error) {
	r := &reader{path: path, anchors: config.Anchors{}}
	root, err := r.root(b)
	if err != nil {
		return nil, err
	}
	top, err := r.mapping(root, "the manifest")
	if err != nil {
		return nil, err
	}
	m := &Manifest{Path: path, Dir: filepath.Dir(path)}
	var agentsE, channelsE *entry
	harness, perms := "", PersonaReject
	seen := map[string]bool{}
	for i := range top {
		e := top[i]
		seen[e.key] = true
		switch e.key {
		case "apiVersion":
			v, err := r.str(e)
			if err != nil {
				return nil, err
			}
			if v != APIVersion {
				return nil, r.at(e.value, "apiVersion %q is not %s, the one this cotal reads", v, APIVersion)
			}
		case "kind":
			v, err := r.str(e)
			if err != nil {
				return nil, err
			}
			if v != Kind {
				return nil, r.at(e.value, "kind %q is not %s", v, Kind)
			}
		case "space":
			if m.Space, err = r.str(e); err != nil {
				return nil, err
			}
			if err := wire.ValidSpace(m.Space); err != nil {
				return nil, r.at(e.value, "space: %v", err)
			}
		case "broker":
			if m.Open, m.Servers, err = r.broker(e); err != nil {
				return nil, err
			}
		case "agent":
			if harness, err = r.harness(e); err != nil {
				return nil, err
			}
		case "personaPermissions":
			if perms, err = r.perms(e); err != nil {
				return nil, err
			}
		case "defaults":
			if m.Defaults, err = r.channelConfig(e, false); err != nil {
				return nil, err
			}
		case "agents":
			agentsE = &top[i]
		case "channels":
			channelsE = &top[i]
		case "runtime":
			return nil, r.at(e.keyN, "runtime is not supported by this cotal: the mesh runs its seats itself; leave the key out")
		default:
			return nil, r.unknown(e, "the manifest", topKeys[:len(topKeys)-1])
		}
	}
	for _, k := range []string{"apiVersion", "kind", "space", "channels"} {
		if !seen[k] {
			return nil, &Error{Path: path, Line: 1, Col: 1, Err: fmt.Errorf("%s is required (a manifest starts apiVersion: %s, kind: %s, space: <name>, and lists its channels)", k, APIVersion, Kind)}
		}
	}
	if agentsE != nil {
		if err := r.agents(m, *agentsE, harness, perms); err != nil {
			return nil, err
		}
	}
	if err := r.channels(m, *channelsE); err != nil {
		return nil, err
	}
	invert(m)
	return m, nil
}

var brokerKeys = []string{"auth", "servers", "host", "idp"}

// broker reads broker:, returning whether the mesh runs open and the
// servers it lives on. Keys this cotal cannot honour are refused rather
// than ignored.
func (r *reader) broker(e entry) (bool, []string, error) {
	es, err := r.mapping(e.value, "broker")
	if err != nil {
		return false, nil, err
	}
	open := false
	var servers []string
	for _, b := range es {
		switch b.key {
		case "auth":
			switch v := r.anchors.Resolve(b.value).(type) {
			case *ast.BoolNode:
				open = !v.Value
			default:
				s, err := r.str(b)
				if err != nil {
					return false, nil, r.at(b.value, "broker.auth must be true, false or \"static\", not a %s", shape(v))
				}
				switch s {
				case "static":
				case "user":
					return false, nil, r.at(b.value, "broker.auth \"user\" is not supported by this cotal: use true (per-agent credentials) or false (open)")
				default:
					return false, nil, r.at(b.value, "broker.auth %q: use true (per-agent credentials), \"static\" (the same) or false (open)", s)
				}
			}
		case "servers":
			items, err := r.strings(b)
			if err != nil {
				return false, nil, err
			}
			for _, it := range items {
				if u, err := url.Parse(it.value); err != nil || u.Host == "" || u.User != nil || (u.Scheme != "nats" && u.Scheme != "tls") {
					return false, nil, r.at(it.n, "broker.servers entry %q: use nats://host:port or tls://host:port, with no user or password in it", it.value)
				}
				servers = append(servers, it.value)
			}
		case "host", "idp":
			return false, nil, r.at(b.keyN, "broker.%s is not supported by this cotal: the mesh runs embedded on loopback at a port it picks, or on broker.servers; leave it out", b.key)
		default:
			return false, nil, r.unknown(b, "broker", brokerKeys)
		}
	}
	return open, servers, nil
}

var harnesses = []string{"claude", "codex", "opencode", "command"}

func (r *reader) harness(e entry) (string, error) {
	h, err := r.str(e)
	if err != nil {
		return "", err
	}
	if !slices.Contains(harnesses, h) {
		return "", r.at(e.value, "agent %q: use %s", h, strings.Join(harnesses, ", "))
	}
	return h, nil
}

func (r *reader) perms(e entry) (string, error) {
	p, err := r.str(e)
	if err != nil {
		return "", err
	}
	if p != PersonaReject && p != PersonaInclude {
		return "", r.at(e.value, "personaPermissions %q: use reject (the manifest's channels alone decide) or include (an agent file's channel lists add to them)", p)
	}
	return p, nil
}

// channelConfig reads registry fields; with lists, the three agent lists
// are allowed too (and read by the caller).
func (r *reader) channelConfig(e entry, withTexts bool) (mesh.ChannelConfig, error) {
	var c mesh.ChannelConfig
	es, err := r.mapping(e.value, e.key)
	if err != nil {
		return c, err
	}
	for _, f := range es {
		switch {
		case f.key == "replay":
			v, err := r.boolean(f)
			if err != nil {
				return c, err
			}
			c.Replay = &v
		case f.key == "replayWindow":
			if c.ReplayWindow, err = r.str(f); err != nil {
				return c, err
			}
			if _, err := mesh.ParseWindow(c.ReplayWindow); err != nil {
				return c, r.at(f.value, "%v", err)
			}
		case f.key == "deliveryClass":
			if c.DeliveryClass, err = r.str(f); err != nil {
				return c, err
			}
			if c.DeliveryClass != mesh.ClassLive && c.DeliveryClass != mesh.ClassDurable {
				return c, r.at(f.value, "deliveryClass %q: use %s or %s", c.DeliveryClass, mesh.ClassLive, mesh.ClassDurable)
			}
		case withTexts && (f.key == "description" || f.key == "instructions"):
			s, err := r.str(f)
			if err != nil {
				return c, err
			}
			if f.key == "description" {
				c.Description = s
			} else {
				c.Instructions = s
			}
			if err := c.Validate(); err != nil {
				return c, r.at(f.value, "%v", err)
			}
		case withTexts && slices.Contains(aclKeys, f.key):
		default:
			known := []string{"replay", "replayWindow", "deliveryClass"}
			if withTexts {
				known = append(known, "description", "instructions")
				known = append(known, aclKeys...)
			}
			return c, r.unknown(f, e.key, known)
		}
	}
	return c, nil
}

var aclKeys = []string{"subscribe", "allowSubscribe", "allowPublish"}

// channels reads channels:, each name concrete and each list entry an
// agent the file declares.
func (r *reader) channels(m *Manifest, e entry) error {
	es, err := r.mapping(e.value, "channels")
	if err != nil {
		return err
	}
	for _, ce := range es {
		if err := wire.ValidateChannel(ce.key); err != nil {
			return r.at(ce.keyN, "channel %q: %v", ce.key, err)
		}
		if !wire.IsConcrete(ce.key) {
			return r.at(ce.keyN, "channel %q is a pattern: a manifest names concrete channels (list team.a and team.b, not team.*)", ce.key)
		}
		cfg, err := r.channelConfig(ce, true)
		if err != nil {
			return err
		}
		ch := &Channel{Name: ce.key, Config: cfg, Subscribe: []string{}, AllowSubscribe: []string{}, AllowPublish: []string{}}
		fs, _ := r.mapping(ce.value, ce.key)
		for _, f := range fs {
			var dst *[]string
			switch f.key {
			case "subscribe":
				dst = &ch.Subscribe
			case "allowSubscribe":
				dst = &ch.AllowSubscribe
			case "allowPublish":
				dst = &ch.AllowPublish
			default:
				continue
			}
			items, err := r.strings(f)
			if err != nil {
				return err
			}
			for _, it := range items {
				if m.Agent(it.value) == nil {
					return r.at(it.n, "channels.%s.%s: %q is not an agent of this manifest (agents: %s)", ce.key, f.key, it.value, strings.Join(agentNames(m), ", "))
				}
				if slices.Contains(*dst, it.value) {
					return r.at(it.n, "channels.%s.%s lists %q twice", ce.key, f.key, it.value)
				}
				*dst = append(*dst, it.value)
			}
		}
		m.Channels = append(m.Channels, ch)
	}
	slices.SortFunc(m.Channels, func(a, b *Channel) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

func agentNames(m *Manifest) []string {
	if len(m.Agents) == 0 {
		return []string{"none"}
	}
	out := make([]string, len(m.Agents))
	for i, a := range m.Agents {
		out[i] = a.Name
	}
	return out
}

// invert gives each agent the rights the channels list it with; posting
// is denied unless a channel's allowPublish names the agent, and reading
// a channel one is subscribed to is implied.
func invert(m *Manifest) {
	for _, ch := range m.Channels {
		for _, n := range ch.Subscribe {
			a := m.Agent(n)
			a.Subscribe = appendNew(a.Subscribe, ch.Name)
			a.AllowSubscribe = appendNew(a.AllowSubscribe, ch.Name)
		}
		for _, n := range ch.AllowSubscribe {
			a := m.Agent(n)
			a.AllowSubscribe = appendNew(a.AllowSubscribe, ch.Name)
		}
		for _, n := range ch.AllowPublish {
			a := m.Agent(n)
			a.AllowPublish = appendNew(a.AllowPublish, ch.Name)
		}
	}
}

func appendNew(l []string, s string) []string {
	if slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}

var errNoPersona = errors.New("resolves to no agent file")
