// Package clirun is what the cotal client commands do: the mesh a command
// reaches and as whom (Caller), and each command's flow over it (send and
// follow, history and retention, inbox, deliveries, channels, describe and
// invoke, a seat's self calls and hooks, mint, join, the names a shell
// completion offers; the managers' census, a spawn followed to its
// outcome, a seat's screen, typing, answers and attach; a seat's worktree
// diff and review; the MCP server and its client configuration). It hands
// main values and errors: bad input as an internal/cliargs UsageError
// (exit 2), a refusal of the control surface as a RefusedError; clirender
// prints them. It prints nothing itself, and never imports clirender
// (which imports it) or the dashboard (tui; only tui/line, the terminal
// join runs).
package clirun

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/seat/client"
)

// Timeout is the default deadline of a one-shot command's broker calls.
const Timeout = 10 * time.Second

// Caller is who a command acts as and where: the global flags as they
// are when the call is made, and the space the process resolved first.
type Caller struct {
	Space, StoreDir, Creds, Server string
	// TLS is how a mesh taking TLS only is verified (--tls-pin,
	// --tls-ca); zero: the pin broker.json records, when it names the
	// URL dialled.
	TLS config.TLSTrust
	// Logf is where an endpoint's log goes when the options name none.
	Logf func(format string, args ...any)
	// AsAgent says whether Creds names an agent's (or an observer's)
	// credential rather than the operator's; nil says no.
	AsAgent func() bool
	// Resolved is the process's first resolution of the space, shared by
	// every Caller it makes: a dashboard or join that serves the folder's
	// one mesh must not be moved off it when another mesh starts for the
	// folder. Nil resolves afresh each time.
	Resolved *Resolved
}

// Resolved holds the space a process resolved first; its zero value has
// none yet. The dashboard dials from more than one goroutine.
type Resolved struct {
	mu  sync.Mutex
	res *config.Resolution
}

// RefusedError is a call the control surface refused: the command ran
// and failed, in the words clirender.Refusal gives it; it exits 1.
type RefusedError struct{ Err *proto.Error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Refused is err as a RefusedError when it is a refusal, else err.
func Refused(err error) error {
	if e := proto.AsError(err); e != nil {
		return &RefusedError{e}
	}
	return err
}

// Paths resolves the space and its paths. When nothing names the space,
// the one mesh running for this folder is it; several are bad input. The
// first resolution holds for the rest of the process. A --tls-pin or
// --tls-ca no connection could use is bad input too, whatever the command
// does next.
func (c Caller) Paths() (string, config.Paths, config.Resolution, error) {
	if err := c.TLS.Check(); err != nil {
		return "", config.Paths{}, config.Resolution{}, bad(err)
	}
	data, err := config.DataDir()
	if err != nil {
		return "", config.Paths{}, config.Resolution{}, err
	}
	r := c.Resolved
	if r == nil {
		r = &Resolved{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.res == nil {
		cwd, _ := os.Getwd()
		res, err := config.ResolveSpace(config.SpaceQuery{
			Flag: c.Space, Creds: c.Creds, Cwd: cwd, Data: data,
			Running: func() ([]config.LiveMesh, error) { return host.RunningMeshes(data) },
		})
		if err != nil {
			return "", config.Paths{}, res, cliargs.UsageError{Err: err}
		}
		r.res = &res
	}
	res := *r.res
	p, err := config.SpacePaths(data, res.Space, c.StoreDir)
	return data, p, res, err
}

// Target finds the mesh a client command talks to (host.Resolve):
// --server, --creds and --tls-pin or --tls-ca win; else the process
// holding the space's store lock, as the local operator.
func (c Caller) Target() (host.Target, error) {
	data, p, res, err := c.Paths()
	if err != nil {
		return host.Target{}, err
	}
	t, err := host.Resolve(p, c.Server, c.Creds, c.TLS)
	if errors.Is(err, host.ErrNotRunning) {
		return t, host.NotRunning(data, p, res)
	}
	return t, err
}

// Endpoint connects to the space's mesh as --creds, or as the local
// operator.
func (c Caller) Endpoint(ctx context.Context, o mesh.Options) (*mesh.Endpoint, error) {
	t, err := c.Target()
	if err != nil {
		return nil, err
	}
	o.URL, o.Creds = t.URL, t.Creds
	if o.TLS, err = t.TLS(); err != nil {
		return nil, err
	}
	if o.Creds == "" || c.Space != "" {
		o.Space = t.Paths.Space
	}
	if o.Creds == "" && o.Name == "" {
		o.Name = issue.OperatorPrincipal().Actor
	}
	if o.Logf == nil {
		o.Logf = c.Logf
	}
	return mesh.Connect(ctx, o)
}

// OneShot runs fn with a one-shot endpoint (no presence, nothing consumed
// until asked) with options o, within Timeout.
func (c Caller) OneShot(o mesh.Options, fn func(ctx context.Context, e *mesh.Endpoint) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	o.OneShot = true
	e, err := c.Endpoint(ctx, o)
	if err != nil {
		return err
	}
	defer e.Close()
	return fn(ctx, e)
}

// Control connects to the control surface as --creds, or as the local
// operator; nothing here knows any endpoint's commands. Closing the
// connection ends the client.
func (c Caller) Control() (*ep.Client, *nats.Conn, error) {
	t, err := c.Target()
	if err != nil {
		return nil, nil, err
	}
	return t.ControlClient()
}

// Managers is a client of the space's managers as this caller; closing
// the connection ends it. An agent's credential gets an agent's client:
// it sends its census and finds seats on the roster, since it may not
// read the registry the operator's census freezes.
func (c Caller) Managers() (*client.Client, *nats.Conn, error) {
	ec, nc, err := c.Control()
	if err != nil {
		return nil, nil, err
	}
	if c.AsAgent == nil || !c.AsAgent() {
		return client.New(ec), nc, nil
	}
	roster := func(ctx context.Context) ([]presence.Peer, error) {
		e, err := c.Endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}})
		if err != nil {
			return nil, err
		}
		defer e.Close()
		peers, _, err := e.Roster(ctx)
		return peers, err
	}
	return client.New(ec, client.AsAgent(roster)), nc, nil
}

// Locate finds a seat over the managers (or only on): a name no manager
// has is bad input; a refusal is returned as it came.
func Locate(cl *client.Client, name, on string) (client.CensusRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	row, err := cl.Locate(ctx, name, on)
	var none *client.NoSeatError
	if errors.As(err, &none) {
		return row, cliargs.UsageError{Err: err}
	}
	return row, err
}

// OnSeat locates a seat over the managers (or only on) and makes one
// call on it; a refusal, of the locate or the call, is returned as it
// came.
func (c Caller) OnSeat(name, on string, call func(context.Context, *client.Client, client.Seat) error) error {
	return c.onSeatWithin(name, on, Timeout, call)
}

// onSeatWithin is OnSeat with the call bounded by within instead of
// Timeout (Ctrl-C ends it at once, as any short command).
func (c Caller) onSeatWithin(name, on string, within time.Duration, call func(context.Context, *client.Client, client.Seat) error) error {
	cl, nc, err := c.Managers()
	if err != nil {
		return err
	}
	defer nc.Close()
	row, err := Locate(cl, name, on)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return call(ctx, cl, row.Seat())
}

// Redialer is a manager client that dials again after the mesh went away.
func (c Caller) Redialer() *client.Redialer {
	return client.NewRedialer(func() (*client.Client, error) {
		cl, _, err := c.Managers() // the redialer closes the connection through the client
		return cl, err
	})
}

// Operator runs fn on a connection to the space's mesh as the local
// operator (or --creds), named name, within Timeout.
func (c Caller) Operator(name string, fn func(ctx context.Context, nc *nats.Conn, space string) error) error {
	t, err := c.Target()
	if err != nil {
		return err
	}
	nc, err := t.Connect(name)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	return fn(ctx, nc, t.Paths.Space)
}

// usagef is bad input in words.
func usagef(format string, a ...any) error { return cliargs.Usagef(format, a...) }

// bad is err as bad input.
func bad(err error) error { return cliargs.UsageError{Err: err} }
