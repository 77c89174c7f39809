package broker

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrNoJetStream is returned by Start with URLs when the server or cluster
// answers but JetStream is not enabled for the account cotal connects as.
var ErrNoJetStream = errors.New("JetStream is not enabled")

// CheckURLs refuses a server list cotal cannot dial: each entry a
// nats://, tls:// or bare host:port address.
func CheckURLs(urls []string) error {
	if len(urls) == 0 {
		return errors.New("no server given")
	}
	for _, raw := range urls {
		s := raw
		if !strings.Contains(s, "://") {
			s = "nats://" + s
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return fmt.Errorf("server %q is not a NATS URL: use nats://host:port", raw)
		}
		switch u.Scheme {
		case "nats", "tls":
		default:
			return fmt.Errorf("server %q: scheme %q is not one cotal dials: use nats:// or tls://", raw, u.Scheme)
		}
		if u.User != nil {
			return fmt.Errorf("server %q carries a user or password in the URL: pass a creds file with --creds instead, so it stays out of argv", u.Redacted())
		}
	}
	return nil
}

// dial is Start for a mesh on a server or cluster cotal did not start: it
// connects, checks that JetStream answers, and sizes the stream limits from
// the account's JetStream limit (DefaultStoreBudget when it has none).
func dial(o Options) (*Broker, error) {
	if err := CheckURLs(o.URLs); err != nil {
		return nil, err
	}
	b := &Broker{opts: o, url: strings.Join(o.URLs, ",")}
	if !o.Open {
		auth, err := LoadAuthority(o.Paths)
		if err != nil {
			return nil, err
		}
		b.auth = auth
	}
	nc, err := b.Connect("cotal-broker")
	if err != nil {
		return nil, fmt.Errorf("%w: connecting to %s: %v (is a nats-server with JetStream running there, and reachable from here?)", ErrNotReady, b.url, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.ReadyTimeout)
	defer cancel()
	js, err := jetstream.New(nc)
	if err == nil {
		var info *jetstream.AccountInfo
		info, err = js.AccountInfo(ctx)
		if err == nil {
			b.maxStore = info.Limits.MaxStore
		}
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w on %s for the account cotal connects as (%v): run nats-server with JetStream on (-js, or jetstream {} in its config)", ErrNoJetStream, b.url, err)
	}
	if b.maxStore <= 0 {
		b.maxStore = DefaultStoreBudget
	}
	if o.MaxStore > 0 && o.MaxStore < b.maxStore {
		b.maxStore = o.MaxStore
	}
	b.internal = nc
	return b, nil
}

// External reports whether the mesh runs on a server cotal did not start.
func (b *Broker) External() bool { return b.srv == nil }

// connectRemote opens a connection to the servers at b.url that rides
// out the loss of any one of them: it reconnects without end to whichever
// member of the cluster answers.
func (b *Broker) connectRemote(name string, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(name), nats.Timeout(5 * time.Second),
		nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
	}
	switch {
	case b.opts.Creds != "":
		opts = append(opts, nats.UserCredentials(b.opts.Creds))
	case b.auth != nil:
		c, err := b.auth.Mint(Identity{
			Principal: wire.Principal{Owner: "local", Actor: "cotal_mesh"},
			Profile:   wire.ProfileOperator,
		})
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserJWTAndSeed(c.JWT, string(c.Seed)))
	}
	return nats.Connect(b.url, append(opts, extra...)...)
}
