package broker

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Leaf joins the embedded broker to others by NATS leafnode connections:
// as a hub (Listen, the listener leaves dial) or as a leaf (Remote, the
// hub it dials). Each side keeps its own JetStream under its own Domain,
// so every side has the space's streams of its own and none is stored
// twice in one domain.
type Leaf struct {
	// Domain is this side's JetStream domain, a token; required with
	// Listen or Remote, and different on every side.
	Domain string
	// Listen is host:port of the leafnode listener ("" none).
	Listen string
	// Remote is the hub's leafnode URL (nats-leaf://, nats://, tls://).
	Remote string
	// Creds is the credential file the hub minted for this leaf (auth);
	// "" in open mode.
	Creds string
	// Peers are the other sides' domains whose stored messages this
	// side's streams source: the hub's for a leaf, each leaf's for a hub.
	Peers []string
}

// On reports whether the broker takes part in a leaf link.
func (l Leaf) On() bool { return l.Listen != "" || l.Remote != "" }

// Check refuses a leaf set-up cotal cannot run, saying what to change.
func (l Leaf) Check() error {
	if !l.On() {
		if l.Domain != "" || len(l.Peers) > 0 || l.Creds != "" {
			return errors.New("a JetStream domain, leaf peers or leaf creds need --leaf or --leaf-listen")
		}
		return nil
	}
	if !wire.ValidToken(l.Domain) {
		return fmt.Errorf("JetStream domain %q is not a token of [A-Za-z0-9_]: name this side with --domain", l.Domain)
	}
	if l.Listen != "" {
		host, port, err := net.SplitHostPort(l.Listen)
		if err != nil {
			return fmt.Errorf("leaf listener %q is not host:port: %v", l.Listen, err)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			return fmt.Errorf("leaf listener %q: port %q is not a port number", l.Listen, port)
		}
		if host == "" {
			return fmt.Errorf("leaf listener %q names no host: give the address to bind, e.g. 0.0.0.0:7422 or 127.0.0.1:7422", l.Listen)
		}
	}
	if l.Remote != "" {
		if _, err := leafURL(l.Remote); err != nil {
			return err
		}
	}
	seen := map[string]bool{l.Domain: true}
	for _, p := range l.Peers {
		if !wire.ValidToken(p) {
			return fmt.Errorf("peer domain %q is not a token of [A-Za-z0-9_]", p)
		}
		if seen[p] {
			return fmt.Errorf("domain %q is named twice (this side and its peers must all differ)", p)
		}
		seen[p] = true
	}
	return nil
}

// leafURL parses the hub's leafnode address; a bare host:port is nats://.
func leafURL(raw string) (*url.URL, error) {
	s := raw
	if !strings.Contains(s, "://") {
		s = "nats://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("hub %q is not a leafnode URL: use nats://host:7422", raw)
	}
	switch u.Scheme {
	case "nats", "nats-leaf", "tls":
	default:
		return nil, fmt.Errorf("hub %q: scheme %q is not one a leaf dials: use nats:// or tls://", raw, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("hub %q carries a user or password in the URL: pass the hub's leaf creds file instead", u.Redacted())
	}
	return u, nil
}

// leafDenied are the space's subjects that never cross a leaf link, either
// way: channel posts and DMs (they cross as stored messages, by stream
// sourcing, so each side's origin stream holds only its own side's
// publishes), each side's own control surface (endpoint rails, liveness probes,
// delivery control), its stored notices (a sender hears its own side's),
// its backstop copies, and anycast (a role's work queue is served on one
// side only, so no task is taken on both). The server itself keeps the
// JetStream API, $KV and $OBJ subjects on their side of a link between
// domains; the trusted buckets therefore stay each side's own.
func leafDenied(space string) []string {
	root := wire.Root(space)
	return []string{
		root + ".chat.>", root + ".inst.>",
		root + ".ep.>", root + ".live.>", root + ".ctl.>", root + ".trace.>",
		root + ".stored.>", root + ".dinbox.>", root + ".dlv.>", root + ".svc.>",
	}
}

// applyLeaf sets the server options for l: the JetStream domain, the
// listener, the remote bound to the space's account.
func applyLeaf(sopts *server.Options, l Leaf, space, account string) error {
	if !l.On() {
		return nil
	}
	if err := l.Check(); err != nil {
		return err
	}
	sopts.JetStreamDomain = l.Domain
	if l.Listen != "" {
		host, port, _ := net.SplitHostPort(l.Listen)
		p, _ := strconv.Atoi(port)
		if p == 0 {
			p = server.RANDOM_PORT
		}
		sopts.LeafNode.Host = host
		sopts.LeafNode.Port = p
		// A leaf dials the address its person gave, never one the hub
		// advertises (its bind address, unreachable behind a NAT or a
		// relay): a link through a relay stays through it.
		sopts.LeafNode.NoAdvertise = true
	}
	if l.Remote != "" {
		u, err := leafURL(l.Remote)
		if err != nil {
			return err
		}
		if u.Scheme == "nats-leaf" {
			u.Scheme = "nats"
		}
		deny := leafDenied(space)
		sopts.LeafNode.ReconnectInterval = leafReconnect
		sopts.LeafNode.Remotes = []*server.RemoteLeafOpts{{
			LocalAccount: account,
			URLs:         []*url.URL{u},
			Credentials:  l.Creds,
			DenyImports:  deny,
			DenyExports:  deny,
		}}
	}
	return nil
}

// leafReconnect is how soon a leaf dials its hub again after the link
// drops: a laptop back on the network rejoins within a second or two.
const leafReconnect = time.Second

// LeafAddr is the leafnode listener's address (host:port) once started,
// "" when the broker has none.
func (b *Broker) LeafAddr() string {
	if b.srv == nil || b.opts.Leaf.Listen == "" {
		return ""
	}
	v, err := b.srv.Varz(nil)
	if err != nil || v.LeafNode.Port <= 0 {
		return ""
	}
	return net.JoinHostPort(v.LeafNode.Host, strconv.Itoa(v.LeafNode.Port))
}

// LeafLinks is how many leafnode connections the broker has up now.
func (b *Broker) LeafLinks() int {
	if b.srv == nil {
		return 0
	}
	return b.srv.NumLeafNodes()
}

// Options are the options the broker was started with.
func (b *Broker) Options() Options { return b.opts }
