package host

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Target is the mesh a client process talks to, and as whom.
type Target struct {
	Paths  config.Paths
	Record config.BrokerRecord // what broker.json says (zero when it cannot be read)
	URL    string
	Creds  string // the credential it acts with; "" on an open mesh
	// Trust is how the server is verified when it takes TLS: the pin or
	// CA given, else the pin the record names for the URL it names.
	Trust config.TLSTrust
}

// RecordWait bounds how long a client waits for a starting mesh to say
// where it listens.
const RecordWait = 10 * time.Second

// Resolve finds the mesh a client of space p talks to: server, creds and
// trust, when given, win; else the process holding the space's store
// lock, reached as its broker.json says (pinning the certificate it
// records), as the local operator. A mesh that has
// just taken its lock writes broker.json a moment later, so a starting one
// is waited for (RecordWait). No process holding the lock is
// ErrNotRunning; a mesh stopping or whose broker.json is damaged says what
// to do.
func Resolve(p config.Paths, server, creds string, trust config.TLSTrust) (Target, error) {
	if err := trust.Check(); err != nil {
		return Target{}, err
	}
	t := Target{Paths: p, URL: server, Creds: creds, Trust: trust}
	if t.URL != "" {
		t.Record, _ = config.ReadBrokerRecord(p)
	} else {
		var err error
		deadline := time.Now().Add(RecordWait)
		for {
			var s State
			if s, err = Probe(p); err != nil {
				return t, err
			}
			t.Record, err = s.Serving()
			var re *RecordError
			if !errors.As(err, &re) || !re.Starting || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond) // the writer gives no signal to wait on
		}
		var re *RecordError
		switch {
		case errors.Is(err, ErrNotRunning):
			return t, err
		case errors.As(err, &re) && re.Stopping:
			return t, fmt.Errorf("%w; wait for it to end, or `cotal down --space %s`", err, p.Space)
		case errors.As(err, &re) && re.Starting:
			return t, fmt.Errorf("%w after %s; see %s, or pass --server", err, RecordWait, p.LogFile())
		case err != nil:
			return t, fmt.Errorf("%w; `cotal down --with-agents --space %s` stops it and the next `cotal up` writes broker.json again, or pass --server", err, p.Space)
		}
		t.URL = t.Record.URL
	}
	if t.Creds == "" && t.Record.Mode != config.ModeOpen && server == "" {
		t.Creds = p.OperatorCreds()
	}
	t.Trust = recordedTrust(t.Record, t.URL, t.Trust)
	return t, nil
}

// recordedTrust is how a client dialling url verifies the mesh: trust when
// given; else, when url is where the record says this machine's mesh
// listens with TLS, the certificate it records.
func recordedTrust(rec config.BrokerRecord, url string, trust config.TLSTrust) config.TLSTrust {
	if trust.IsZero() && rec.TLSPin != "" && url == rec.URL {
		trust.Pin = rec.TLSPin
	}
	return trust
}

// TLS is the TLS configuration the target is dialled with, nil when the
// server decides (no pin, no CA).
func (t Target) TLS() (*tls.Config, error) { return t.Trust.ClientConfig() }

// Connect opens a client connection to the target, named name.
func (t Target) Connect(name string, extra ...nats.Option) (*nats.Conn, error) {
	return dial(t.URL, t.Creds, t.Trust, name, extra...)
}

// dial connects to url as creds (none: ""), verifying a TLS server as
// trust says.
func dial(url, creds string, trust config.TLSTrust, name string, extra ...nats.Option) (*nats.Conn, error) {
	// No reconnect: a connection whose mesh went away is closed at once,
	// so its user (an attach, a follow) redials the next mesh instead of
	// typing into a dead connection through a reconnect wait.
	opts := []nats.Option{nats.Name(name), nats.Timeout(5 * time.Second), nats.NoReconnect()}
	if creds != "" {
		if _, err := os.Stat(creds); err != nil {
			return nil, fmt.Errorf("creds file: %w", err)
		}
		opts = append(opts, nats.UserCredentials(creds))
	}
	cfg, err := trust.ClientConfig()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		opts = append(opts, nats.Secure(cfg))
	}
	nc, err := nats.Connect(url, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", url, err)
	}
	return nc, nil
}

// ConnectIfRunning connects to the running mesh of space p as the local
// operator, or returns nil when it is not running (no process holds its
// store lock). A mesh that runs but cannot be reached is an error: what
// needs the mesh now must not be put off to its next start.
func ConnectIfRunning(p config.Paths, name string) (*nats.Conn, error) {
	s, err := Probe(p)
	if err != nil || !s.Running {
		return nil, err
	}
	rec, err := s.Serving()
	if err != nil {
		return nil, err
	}
	t := Target{Paths: p, Record: rec, URL: rec.URL, Trust: recordedTrust(rec, rec.URL, config.TLSTrust{})}
	if rec.Mode != config.ModeOpen {
		t.Creds = p.OperatorCreds()
	}
	nc, err := t.Connect(name)
	if err != nil {
		return nil, fmt.Errorf("mesh %s runs (pid %d) but did not answer: %w", p.Space, s.PID, err)
	}
	return nc, nil
}

// ControlClient connects to the target as a control-surface client: the
// caller is the identity its credential names or, on an open mesh, the
// local operator at a fresh lifecycle. The connection's inbox is
// the caller's reply inbox, and the broker's refusals reach the caller as
// the failed call's error (the client watches for them), so nats.go does
// not print them too. Closing the returned connection ends the client.
func (t Target) ControlClient() (*ep.Client, *nats.Conn, error) {
	caller := proto.Caller{}
	if t.Creds != "" {
		b, err := os.ReadFile(t.Creds)
		if err != nil {
			return nil, nil, fmt.Errorf("creds file: %w", err)
		}
		info, err := wire.ParseCreds(b)
		if err != nil {
			return nil, nil, fmt.Errorf("creds file %s: %w", t.Creds, err)
		}
		caller = proto.Caller{Owner: info.Principal.Owner, Actor: info.Principal.Actor, UID: info.UID}
	} else {
		p := issue.OperatorPrincipal()
		caller = proto.Caller{Owner: p.Owner, Actor: p.Actor, UID: wire.NewLifecycleUID()}
	}
	quiet := nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})
	nc, err := t.Connect("cotal "+caller.ID(), nats.CustomInboxPrefix(wire.ReplyInbox(caller.Principal(), caller.UID)), quiet)
	if err != nil {
		return nil, nil, err
	}
	c, err := ep.NewClient(nc, ep.ClientOptions{Space: t.Paths.Space, Caller: caller})
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return c, nc, nil
}
