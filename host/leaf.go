package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/wire"
)

// DefaultHubDomain is a hub's JetStream domain when up does not name one.
const DefaultHubDomain = "hub"

// LeafFlags are up's leaf flags as given.
type LeafFlags struct {
	Listen string // --leaf-listen: be a hub leaves dial
	Remote string // --leaf: the hub to dial
	Creds  string // --leaf-creds: the link credential the hub minted
	Domain string // --domain: this side's JetStream domain
}

// On reports whether any leaf flag was given.
func (f LeafFlags) On() bool { return f != LeafFlags{} }

// leavesFile is where a hub keeps its own domain and the leaves it minted
// link credentials for: the peers its streams source.
func leavesFile(p config.Paths) string { return filepath.Join(p.AuthDir(), "leaves.json") }

// leaves is a hub's record of its links.
type leaves struct {
	Domain string   `json:"domain"`
	Leaves []string `json:"leaves"`
	// Keys is each leaf's current link credential's user key: minting
	// one again revokes the one before.
	Keys map[string]string `json:"keys,omitempty"`
}

func readLeaves(p config.Paths) (leaves, error) {
	var l leaves
	b, err := os.ReadFile(leavesFile(p))
	if errors.Is(err, fs.ErrNotExist) {
		return leaves{Domain: DefaultHubDomain}, nil
	} else if err != nil {
		return l, err
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("%s: %w", leavesFile(p), err)
	}
	return l, nil
}

func writeLeaves(p config.Paths, l leaves) error {
	if err := config.EnsureDir(p.AuthDir(), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFileAtomic(leavesFile(p), append(b, '\n'), 0o600)
}

// ResolveLeaf turns up's leaf flags into the broker's link for the space
// at p. A hub's domain is --domain, else the one its leaves' credentials
// name, else "hub"; its peers are the leaves `cotal leaf-creds` minted.
// A leaf's domain and its hub's come from the link credential, which must
// be for this space.
func ResolveLeaf(p config.Paths, f LeafFlags) (broker.Leaf, error) {
	if !f.On() {
		return broker.Leaf{}, nil
	}
	if f.Domain != "" {
		if err := broker.CheckDomain(f.Domain); err != nil {
			return broker.Leaf{}, fmt.Errorf("--domain: %w", err)
		}
	}
	if f.Listen != "" {
		rec, err := readLeaves(p)
		if err != nil {
			return broker.Leaf{}, err
		}
		d := rec.Domain
		if f.Domain != "" && f.Domain != d && len(rec.Leaves) > 0 {
			return broker.Leaf{}, fmt.Errorf("--domain %s: the link credentials of %s name this hub %s; leave --domain out, or mint them again with `cotal leaf-creds` after a start with the new domain", f.Domain, strings.Join(rec.Leaves, ", "), d)
		}
		if f.Domain != "" {
			d = f.Domain
		}
		return broker.Leaf{Domain: d, Listen: f.Listen, Peers: rec.Leaves}, nil
	}
	tags, err := broker.ReadLinkCreds(f.Creds)
	if err != nil {
		return broker.Leaf{}, fmt.Errorf("--leaf-creds: %w", err)
	}
	if want := strings.ToLower(wire.SanitizeToken(p.Space)); tags.Space != want {
		return broker.Leaf{}, fmt.Errorf("--leaf-creds %s links space %s, not %s: run up with --space %s, or mint it on the hub of this space", f.Creds, tags.Space, p.Space, tags.Space)
	}
	if f.Domain != "" && f.Domain != tags.Leaf {
		return broker.Leaf{}, fmt.Errorf("--domain %s: the hub minted %s for leaf %s, and its streams source that domain; leave --domain out", f.Domain, f.Creds, tags.Leaf)
	}
	creds, err := filepath.Abs(f.Creds)
	if err != nil {
		return broker.Leaf{}, err
	}
	return broker.Leaf{Domain: tags.Leaf, Remote: f.Remote, Creds: creds, Peers: []string{tags.Hub}}, nil
}

// link shapes the streams for the leaf link the host runs with and
// follows it, or, without one, undoes a link an earlier start made. A
// mesh on servers cotal did not start has no link of its own.
func (h *Host) link(ctx context.Context, nc *nats.Conn) error {
	space, l := h.cfg.Paths.Space, h.cfg.Leaf
	if !l.On() {
		if h.broker.External() {
			return nil
		}
		if err := broker.UnlinkStreams(ctx, nc, space, h.broker.MaxStore()); err != nil {
			return fmt.Errorf("unlinking the streams of a start without a leaf link: %w", err)
		}
		return nil
	}
	if l.Listen != "" {
		rec, err := readLeaves(h.cfg.Paths)
		if err != nil {
			return err
		}
		rec.Domain = l.Domain
		if err := writeLeaves(h.cfg.Paths, rec); err != nil {
			return err
		}
	}
	if err := broker.LinkStreams(ctx, nc, space, h.broker.MaxStore(), l.Domain, l.Peers); err != nil {
		return fmt.Errorf("linking the streams with %s: %w", strings.Join(l.Peers, ", "), err)
	}
	done := make(chan struct{})
	h.leafDone = done
	go func() {
		defer close(done)
		h.broker.FollowLeafLinks(h.life, nc, space, h.logf)
	}()
	return nil
}

// LeafRecord is the leaf link the host runs with, as broker.json names
// it; nil without one.
func (h *Host) LeafRecord() *config.LeafRecord {
	l := h.cfg.Leaf
	if !l.On() {
		return nil
	}
	return &config.LeafRecord{Domain: l.Domain, Listen: h.broker.LeafAddr(), Remote: l.Remote, Peers: append([]string{}, l.Peers...)}
}

// LinkMinted is what MintLink did.
type LinkMinted struct {
	Path    string `json:"creds"` // the link credential, absolute
	Space   string `json:"space"`
	Leaf    string `json:"leaf"`    // the leaf's domain
	Hub     string `json:"hub"`     // the hub's domain
	Running bool   `json:"running"` // the space's mesh runs here
	Linked  bool   `json:"linked"`  // its streams now source the leaf too
	// Listen is the running hub's leafnode listener, "" when it runs
	// without one.
	Listen string `json:"listen,omitempty"`
}

// MintLink mints the credential the leaf with domain leaf dials this
// space's hub with, writes it 0600 to out (default the store's
// auth/creds/link-<leaf>.creds) and records the leaf as a peer; on a hub
// that runs, its streams source the leaf at once.
func MintLink(ctx context.Context, p config.Paths, leaf, out string) (LinkMinted, error) {
	if err := Mintable(p); err != nil {
		return LinkMinted{}, err
	}
	if err := broker.CheckDomain(leaf); err != nil {
		return LinkMinted{}, &RefusedError{err}
	}
	rec, err := readLeaves(p)
	if err != nil {
		return LinkMinted{}, err
	}
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		return LinkMinted{}, err
	}
	c, err := auth.MintLink(leaf, rec.Domain)
	if err != nil {
		return LinkMinted{}, &RefusedError{err}
	}
	if out == "" {
		out = filepath.Join(p.CredsDir(), "link-"+leaf+".creds")
	}
	if out, err = filepath.Abs(out); err != nil {
		return LinkMinted{}, err
	}
	if err := config.EnsureDir(filepath.Dir(out), 0o700); err != nil {
		return LinkMinted{}, err
	}
	if err := broker.WriteCreds(out, c); err != nil {
		return LinkMinted{}, err
	}
	if !slices.Contains(rec.Leaves, leaf) {
		rec.Leaves = append(rec.Leaves, leaf)
	}
	old := rec.Keys[leaf]
	if rec.Keys == nil {
		rec.Keys = map[string]string{}
	}
	rec.Keys[leaf] = c.UserKey
	if err := writeLeaves(p, rec); err != nil {
		return LinkMinted{}, err
	}
	m := LinkMinted{Path: out, Space: p.Space, Leaf: leaf, Hub: rec.Domain}
	nc, err := ConnectIfRunning(p, "cotal leaf-creds")
	if err != nil {
		return m, err
	}
	if nc != nil {
		defer nc.Close()
		m.Running = true
	}
	if err := revokeLink(ctx, auth, nc, leaf, old); err != nil {
		return m, err
	}
	if nc == nil {
		return m, nil
	}
	br, err := config.ReadBrokerRecord(p)
	if err != nil || br.Leaf == nil || br.Leaf.Listen == "" {
		return m, err
	}
	m.Listen = br.Leaf.Listen
	if err := broker.LinkStreams(ctx, nc, p.Space, br.MaxStore, rec.Domain, rec.Leaves); err != nil {
		return m, fmt.Errorf("the running hub's streams did not take leaf %s (its next start links them): %w", leaf, err)
	}
	m.Linked = true
	return m, nil
}

// LeafStatus is the leaf link of a running mesh as status shows it.
type LeafStatus struct {
	Domain string `json:"domain"`
	Listen string `json:"listen,omitempty"` // a hub's leafnode listener
	Remote string `json:"remote,omitempty"` // a leaf's hub
	// Peers are the other sides' domains this side's streams source, each
	// with whether its sources are live; LinksUp counts the live ones.
	Peers   []LeafPeer `json:"peers"`
	LinksUp int        `json:"linksUp"`
}

// LeafPeer is one other side of a link, as this side's linked streams
// source it.
type LeafPeer struct {
	Domain string `json:"domain"`
	Up     bool   `json:"up"`
	Lag    uint64 `json:"lag"`             // messages its sources are behind, summed
	Error  string `json:"error,omitempty"` // what a source of it reports
}

// sourceLive is how recently a source must have heard from its peer to
// count as up: the server's source consumers beat every second.
const sourceLive = 3 * time.Second

// leafStatus reads the link rec names from the linked streams' sources:
// a peer is up while every source of it heard from it within sourceLive
// and reports no error.
func leafStatus(ctx context.Context, js jetstream.JetStream, space string, rec *config.LeafRecord) *LeafStatus {
	if rec == nil {
		return nil
	}
	ls := &LeafStatus{Domain: rec.Domain, Listen: rec.Listen, Remote: rec.Remote, Peers: []LeafPeer{}}
	at := map[string]int{} // domain -> index in ls.Peers
	peer := func(d string) *LeafPeer {
		i, ok := at[d]
		if !ok {
			i = len(ls.Peers)
			at[d] = i
			ls.Peers = append(ls.Peers, LeafPeer{Domain: d})
		}
		return &ls.Peers[i]
	}
	for _, d := range rec.Peers {
		peer(d)
	}
	seen := map[string]bool{} // peers some linked stream sources
	for _, name := range broker.LinkedStreams(space) {
		s, err := js.Stream(ctx, name)
		if err != nil {
			continue
		}
		for _, src := range s.CachedInfo().Sources {
			if src.External == nil {
				continue
			}
			d := strings.TrimSuffix(strings.TrimPrefix(src.External.APIPrefix, "$JS."), ".API")
			p := peer(d)
			if !seen[d] {
				seen[d], p.Up = true, true
			}
			p.Lag += src.Lag
			if src.Error != nil {
				p.Error = src.Error.Description
			}
			if src.Error != nil || src.Active < 0 || src.Active > sourceLive {
				p.Up = false
			}
		}
	}
	for _, p := range ls.Peers {
		if p.Up && seen[p.Domain] {
			ls.LinksUp++
		}
	}
	return ls
}

// revokeLink revokes the link credential of leaf with user key key (none
// when ""), the one a new mint replaces: on the running hub (nc, nil when
// none runs) at once, closing the link it holds; else at the hub's next
// start.
func revokeLink(ctx context.Context, auth *broker.Authority, nc *nats.Conn, leaf, key string) error {
	if key == "" {
		return nil
	}
	var apply func(string) error
	if nc != nil {
		apply = func(ajwt string) error { return issue.PushAccount(ctx, auth, nc, ajwt) }
	}
	err := auth.Revoke([]broker.Revocation{{UserKey: key, Principal: broker.LinkPrincipal(leaf)}}, apply)
	if err != nil {
		return fmt.Errorf("revoking the link credential %s had before: %w", leaf, err)
	}
	return nil
}
