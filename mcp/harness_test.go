package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // seats of the in-process manager start through this binary
	os.Exit(m.Run())
}

const space = "mcptest"

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// meshH is one real mesh (broker, delivery service, manager) on a temp
// store, with personas in a temp project.
type meshH struct {
	t       testing.TB
	m       *host.Host
	paths   config.Paths
	project string
	op      *nats.Conn
}

func startMesh(t testing.TB) *meshH {
	t.Helper()
	h := &meshH{t: t, paths: config.Paths{Space: space, StoreDir: t.TempDir()}, project: t.TempDir()}
	m, err := host.Start(ctxT(t), host.Config{Paths: h.paths, ProjectDir: h.project, Readiness: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	t.Cleanup(func() { _ = m.Close() })
	if h.op, err = m.Broker().Connect("operator"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.op.Close)
	return h
}

func (h *meshH) url() string { return h.m.Broker().URL() }

// mint mints an agent and writes its creds file.
func (h *meshH) mint(name, role string, subscribe, allowPublish []string) string {
	h.t.Helper()
	id := broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: name}, Role: role,
		Subscribe: subscribe, AllowSubscribe: subscribe, AllowPublish: allowPublish}
	if allowPublish == nil {
		id.AllowPublish = []string{}
	}
	cr, _, err := issue.Mint(ctxT(h.t), h.paths, id, h.op)
	if err != nil {
		h.t.Fatal(err)
	}
	path := filepath.Join(h.t.TempDir(), name+".creds")
	if err := broker.WriteCreds(path, cr); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// peer connects a long-lived endpoint as the identity in creds.
func (h *meshH) peer(creds string) *mesh.Endpoint {
	h.t.Helper()
	e, err := mesh.Connect(ctxT(h.t), mesh.Options{URL: h.url(), Creds: creds})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = e.Close() })
	return e
}

// client is an MCP client session on a server running in-process.
type client struct {
	t  testing.TB
	cs *sdk.ClientSession
}

// serve runs an MCP server with opts and connects a client to it over an
// in-memory pipe; both end with the test.
func serve(t testing.TB, opts mcp.Options) *client {
	t.Helper()
	c, stop := serveStoppable(t, opts)
	t.Cleanup(stop)
	return c
}

// serveStoppable is serve, with a stop that ends the client and waits for
// the server to end (so its identity has gone offline).
func serveStoppable(t testing.TB, opts mcp.Options) (*client, func()) {
	t.Helper()
	srv := mcp.New(opts)
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cl := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := cl.Connect(ctxT(t), ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cs.Close()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("the MCP server did not stop within 10 s of its client leaving")
			}
			cancel()
		})
	}
	t.Cleanup(stop)
	return &client{t: t, cs: cs}, stop
}

// standalone serves as the agent of creds on h.
func standalone(t testing.TB, h *meshH, creds string) *client {
	return serve(t, mcp.Options{Dial: func(ctx context.Context) (*mesh.Endpoint, error) {
		return mesh.Connect(ctx, mesh.Options{URL: h.url(), Creds: creds})
	}})
}

// call runs a tool and returns its text and whether it was an error.
func (c *client) call(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.cs.CallTool(ctxT(c.t), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", name, err)
	}
	var parts []string
	for _, ct := range res.Content {
		if tc, ok := ct.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

// ok runs a tool that must succeed.
func (c *client) ok(name string, args map[string]any) string {
	c.t.Helper()
	text, isErr := c.call(name, args)
	if isErr {
		c.t.Fatalf("%s %v failed: %s", name, args, text)
	}
	return text
}

// refused runs a tool that must fail, and returns its text.
func (c *client) refused(name string, args map[string]any) string {
	c.t.Helper()
	text, isErr := c.call(name, args)
	if !isErr {
		c.t.Fatalf("%s %v succeeded, want a refusal: %s", name, args, text)
	}
	return text
}

// waitOK polls a tool until its text holds want.
func (c *client) waitOK(name string, args map[string]any, want string) string {
	c.t.Helper()
	var text string
	testutil.WaitFor(c.t, 15*time.Second, func() error {
		var isErr bool
		text, isErr = c.call(name, args)
		if isErr || !strings.Contains(text, want) {
			return &waitErr{name, want, text}
		}
		return nil
	})
	return text
}

// waitText polls a tool until check accepts its text.
func (c *client) waitText(name string, args map[string]any, check func(text string) error) string {
	c.t.Helper()
	var text string
	testutil.WaitFor(c.t, 15*time.Second, func() error {
		var isErr bool
		if text, isErr = c.call(name, args); isErr {
			return &waitErr{name, "success", text}
		}
		return check(text)
	})
	return text
}

// holding accepts a text holding every one of wants.
func holding(wants ...string) func(string) error {
	return func(text string) error {
		for _, w := range wants {
			if !strings.Contains(text, w) {
				return &waitErr{"", w, text}
			}
		}
		return nil
	}
}

type waitErr struct{ tool, want, got string }

func (e *waitErr) Error() string { return e.tool + ": no " + e.want + " in:\n" + e.got }

// next waits for the next item e receives.
func next(t testing.TB, e *mesh.Endpoint) *mesh.Item {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	it, err := e.Next(ctx)
	if err != nil {
		t.Fatalf("%s received nothing: %v", e.Me(), err)
	}
	_ = it.Ack()
	return it
}

// setClass registers a channel with a delivery class, as an operator.
func (h *meshH) setClass(channel, class string) {
	h.t.Helper()
	js, err := jetstream.New(h.op)
	if err != nil {
		h.t.Fatal(err)
	}
	reg, err := mesh.OpenRegistry(ctxT(h.t), js, space)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := reg.Set(ctxT(h.t), channel, mesh.ChannelConfig{DeliveryClass: class}); err != nil {
		h.t.Fatal(err)
	}
}
