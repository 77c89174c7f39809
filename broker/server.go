package broker

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrNotReady is returned when the embedded server did not accept client
// connections within the readiness timeout.
var ErrNotReady = errors.New("broker not ready")

// Options configure one embedded broker. The zero value of every field but
// Paths is a sensible default.
type Options struct {
	Paths config.Paths
	Open  bool   // no auth: owner local, subject prefix is the only isolation
	Sync  string // config.SyncAlways (default) or config.SyncInterval
	Port  int    // 0 means a free port (tests and production alike)

	// Log receives the server's warnings and errors (notices too when
	// Verbose); nil discards them.
	Log     io.Writer
	Verbose bool

	ReadyTimeout time.Duration // default 10s

	// MaxStore caps the JetStream store below what the disk allows
	// (0: three quarters of the free space, plus what the store holds).
	MaxStore int64

	// URLs, when set, name an existing NATS server or cluster with
	// JetStream: Start then starts no server and the mesh lives there.
	URLs []string
	// Creds, with URLs, is the credential the mesh's own connections use;
	// "" mints them from the space's keys (auth) or uses none (Open).
	Creds string

	// Host, when set, is the address the client listener binds instead of
	// 127.0.0.1 (0.0.0.0: every interface), and every client connection
	// must then be TLS with TLS's pair; in-process connections stay as
	// they are. An open mesh may not bind beyond loopback.
	Host string
	TLS  TLSFiles
	// Leaf joins the embedded broker to a hub or lets leaves join it.
	Leaf Leaf
}

// Broker is a running embedded nats-server with JetStream and, in the
// default mode, the space's signing authority.
type Broker struct {
	opts     Options
	srv      *server.Server
	auth     *Authority // nil in open mode
	resolver *server.MemAccResolver
	url      string
	maxStore int64
	pin      string // the served certificate's fingerprint; "" without TLS

	mu       sync.Mutex
	internal *nats.Conn
	limits   *nats.Conn // the system-account connection the per-user connection limit follows events on
}

// Start launches the server, waits until it accepts connections with
// JetStream enabled, and returns it. It does not provision streams; call
// Provision for that.
func Start(o Options) (*Broker, error) {
	if o.Sync == "" {
		o.Sync = config.SyncAlways
	}
	if o.Sync != config.SyncAlways && o.Sync != config.SyncInterval {
		return nil, fmt.Errorf("unknown sync mode %q: use always or interval", o.Sync)
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 10 * time.Second
	}
	if len(o.URLs) > 0 {
		if o.Leaf.On() {
			return nil, errors.New("a leaf link is made by the embedded broker: --leaf and --leaf-listen do not go with --url")
		}
		return dial(o)
	}
	if err := o.Leaf.Check(); err != nil {
		return nil, err
	}
	if err := config.EnsureDir(o.Paths.JetStreamDir(), 0o700); err != nil {
		return nil, err
	}
	b := &Broker{opts: o}
	maxStore, err := storeLimit(o.Paths.JetStreamDir())
	if err != nil {
		return nil, fmt.Errorf("sizing the store at %s: %w", o.Paths.JetStreamDir(), err)
	}
	if o.MaxStore > 0 && o.MaxStore < maxStore {
		maxStore = o.MaxStore
	}
	b.maxStore = maxStore

	port := o.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	listen := "127.0.0.1"
	if o.Host != "" {
		if err := CheckHost(o.Host); err != nil {
			return nil, fmt.Errorf("listen address: %w", err)
		}
		if o.Open && !Loopback(o.Host) {
			return nil, fmt.Errorf("%w: %s is reachable from other machines, and anyone there could read and post as anyone; drop --open (credentials stay required)", ErrOpenBeyondLoopback, o.Host)
		}
		listen = o.Host
	}
	sopts := &server.Options{
		ServerName:        "cotal_" + wire.SanitizeToken(o.Paths.Space),
		Host:              listen,
		Port:              port,
		NoSigs:            true,
		JetStream:         true,
		StoreDir:          o.Paths.JetStreamDir(),
		JetStreamMaxStore: maxStore,
		SyncAlways:        o.Sync == config.SyncAlways,
		MaxPayload:        1 << 20,
		// A user JWT with per-channel rows and cotal tags outgrows the
		// 4 KiB default CONNECT line quickly.
		MaxControlLine: 64 << 10,
		MaxConn:        serverMaxConns(),
	}
	if o.Host != "" {
		if sopts.TLSConfig, b.pin, err = serverTLS(o.Paths, o.Host, o.TLS); err != nil {
			return nil, err
		}
		sopts.TLS, sopts.TLSTimeout = true, 5 // seconds: a loaded machine's handshake outlasts the 2s default
	}
	if !o.Open {
		auth, err := LoadAuthority(o.Paths)
		if err != nil {
			return nil, err
		}
		b.auth = auth
		sopts.TrustedOperators, b.resolver, sopts.SystemAccount = auth.Trust()
		sopts.AccountResolver = b.resolver
	}
	account := ""
	if b.auth != nil {
		account = b.auth.AccountKey()
	}
	if err := applyLeaf(sopts, o.Leaf, o.Paths.Space, account); err != nil {
		return nil, err
	}
	srv, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("configuring broker: %w", err)
	}
	srv.SetLoggerV2(&logAdapter{w: o.Log, verbose: o.Verbose}, false, false, false)
	if b.auth != nil {
		// The server registers an account on its first lookup and shows it
		// to a second lookup before it has enabled the account's JetStream,
		// an enable that makes and removes the streams folder: streams a
		// client made meanwhile lose their files. The first lookups after
		// Start come at once (a leaf link's, the mesh's first clients), so
		// the space's account is registered here, and Start enables its
		// JetStream before it takes a connection or dials a hub.
		if _, err := srv.LookupAccount(account); err != nil {
			return nil, fmt.Errorf("loading the space's account into the broker: %w", err)
		}
	}
	srv.Start()
	if !srv.ReadyForConnections(o.ReadyTimeout) {
		srv.Shutdown()
		return nil, fmt.Errorf("%w: no client listener on %s within %s (store %s)", ErrNotReady, listen, o.ReadyTimeout, o.Paths.StoreDir)
	}
	if !srv.JetStreamEnabled() {
		srv.Shutdown()
		return nil, fmt.Errorf("%w: JetStream did not start on store %s (is the disk full or the dir locked by another server?)", ErrNotReady, o.Paths.JetStreamDir())
	}
	b.srv = srv
	b.url = clientURL(srv.ClientURL(), b.pin != "")
	if b.auth != nil {
		sys, err := b.ConnectSystem()
		if err == nil {
			err = b.limitConnsPerUser(sys, srv.Warnf)
		}
		if err != nil {
			if sys != nil {
				sys.Close()
			}
			srv.Shutdown()
			return nil, fmt.Errorf("limiting connections per credential: %w", err)
		}
		b.limits = sys
	}
	return b, nil
}

// URL is the client URL (nats://127.0.0.1:port; tls://host:port with
// Options.Host), or the servers an external mesh lives on,
// comma-separated.
func (b *Broker) URL() string { return b.url }

// TLSPin is the SHA-256 fingerprint of the certificate the client
// listener serves, "" when it takes plain connections (loopback only).
func (b *Broker) TLSPin() string { return b.pin }

// MaxStore is the JetStream store limit the server was given.
func (b *Broker) MaxStore() int64 { return b.maxStore }

// Server exposes the embedded server for in-process connections; nil
// when the mesh lives on servers cotal did not start.
func (b *Broker) Server() *server.Server { return b.srv }

// Authority is the space's signing authority, nil in open mode.
func (b *Broker) Authority() *Authority { return b.auth }

// JetStreamEnabled reports whether JetStream is still on: a full disk
// switches it off until restart. An external cluster's health is its
// operator's to watch (cotal status shows it): true.
func (b *Broker) JetStreamEnabled() bool { return b.srv == nil || b.srv.JetStreamEnabled() }

// Connect opens an in-process connection with the operator profile (all of
// the space's account). Each call mints a fresh in-memory credential.
func (b *Broker) Connect(name string, extra ...nats.Option) (*nats.Conn, error) {
	if b.srv == nil {
		return b.connectRemote(name, extra...)
	}
	opts := []nats.Option{nats.InProcessServer(b.srv), nats.Name(name)}
	if b.auth != nil {
		c, err := b.auth.Mint(Identity{
			Principal: wire.Principal{Owner: "local", Actor: "cotal_mesh"},
			Profile:   wire.ProfileOperator,
		})
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserJWTAndSeed(c.JWT, string(c.Seed)))
	}
	return nats.Connect("", append(opts, extra...)...)
}

// Internal returns the broker's own shared in-process connection.
func (b *Broker) Internal() (*nats.Conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.internal != nil && !b.internal.IsClosed() {
		return b.internal, nil
	}
	nc, err := b.Connect("cotal-broker")
	if err != nil {
		return nil, err
	}
	b.internal = nc
	return nc, nil
}

// Shutdown closes the internal connection and stops the server, waiting
// until it is down so the store can be reopened.
func (b *Broker) Shutdown() {
	b.mu.Lock()
	if b.internal != nil {
		b.internal.Close()
		b.internal = nil
	}
	if b.limits != nil {
		b.limits.Close()
		b.limits = nil
	}
	b.mu.Unlock()
	if b.srv == nil {
		return
	}
	b.srv.Shutdown()
	b.srv.WaitForShutdown()
}

// logAdapter turns the server's log calls into lines on a writer.
type logAdapter struct {
	mu      sync.Mutex
	w       io.Writer
	verbose bool
}

func (l *logAdapter) out(level, format string, v ...any) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s broker %s: %s\n", time.Now().Format(time.RFC3339), level, fmt.Sprintf(format, v...))
}

func (l *logAdapter) Noticef(format string, v ...any) {
	if l.verbose {
		l.out("notice", format, v...)
	}
}
func (l *logAdapter) Warnf(format string, v ...any)  { l.out("warn", format, v...) }
func (l *logAdapter) Fatalf(format string, v ...any) { l.out("fatal", format, v...) }
func (l *logAdapter) Errorf(format string, v ...any) { l.out("error", format, v...) }
func (l *logAdapter) Debugf(format string, v ...any) {}
func (l *logAdapter) Tracef(format string, v ...any) {}
