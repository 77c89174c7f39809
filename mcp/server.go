// Package mcp is cotal's MCP server: the cotal_* tools of the messaging
// spec (§13) served to an AI agent, acting as one identity. Inside a seat
// (managed) its state lives in the seat's connector in the manager, reached
// through the manager's self commands; outside any seat (standalone) it is
// the agent's own long-lived endpoint, whose stored messages the running
// mesh's delivery service reads for it. Either way the agent's credential
// reads nothing from storage itself, and the tools behave the same.
//
// It imports mesh, mesh/ep, mesh/wire, mesh/presence and seat/client (the
// manager's self commands); never seat's runtime, tui, broker or host.
package mcp

import (
	"context"
	"errors"
	"sort"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cotal-go/cotal/mesh"
)

// Options say how the server reaches the mesh and who it is.
type Options struct {
	// Dial opens the endpoint the server acts through; it is called again
	// after a failure or a lost connection. Standalone: a long-lived
	// endpoint of the agent's credential. Managed: a one-shot endpoint of
	// the seat's credential that joins nothing (Subscribe: []string{}); it
	// only publishes and reads the roster and registry.
	Dial func(ctx context.Context) (*mesh.Endpoint, error)
	// Manager is the instance of the manager whose connector holds the
	// seat (managed mode); "" when standalone.
	Manager string
	// Self is who the credential says this is, for the answers given while
	// the mesh cannot be reached.
	Self Identity
	// Version is reported to the client.
	Version string
	// Logf receives what a person running the server should see (stderr;
	// never stdout, which carries the protocol).
	Logf func(format string, args ...any)
}

// Identity is who the server acts as, as its credential says.
type Identity struct {
	ID    string
	Name  string
	Role  string
	Space string
}

// Server is one MCP server acting as one identity.
type Server struct {
	opts  Options
	link  *link
	sdk   *sdk.Server
	names []string // the tools offered, sorted
}

// instructions tell the model what the server is for.
const instructions = `cotal connects you to other AI agents and people on a shared mesh. ` +
	`Call cotal_orientation first to see who you are, your channels and who else is here. ` +
	`Read what others sent you with cotal_inbox; reply with cotal_dm (one peer), cotal_send (a channel) or cotal_anycast (any holder of a role). ` +
	`Do requested work with your own tools, verify it, then reply; never report an action you did not perform.`

// New builds a server; Run starts it.
func New(opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{opts: opts, link: newLink(opts), names: ToolNames()}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "cotal", Title: "cotal mesh", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	// A harness seat is ready when its MCP client is in: tell the seat's
	// connector, once the link to it is up. A client of the legacy
	// handshake is in once it sent initialized; one of the 2026-07-28
	// protocol never does, and is in once its server/discover succeeded.
	s.sdk.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if err == nil && (method == "notifications/initialized" || method == "server/discover") {
				client := "an MCP client"
				if ss, ok := req.GetSession().(*sdk.ServerSession); ok {
					if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
						client = p.ClientInfo.Name + " " + p.ClientInfo.Version
					}
				}
				s.link.clientIn(client)
			}
			return res, err
		}
	})
	for _, t := range toolSet() {
		s.sdk.AddTool(t.sdkTool(), s.handler(t))
	}
	return s
}

// Run connects to the mesh in the background and serves the client over
// t until the client leaves or ctx ends; then it closes the endpoint, so
// the identity goes offline.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	go s.link.run()
	err := s.sdk.Run(ctx, t)
	if cerr := s.link.close(); cerr != nil && s.opts.Logf != nil {
		s.opts.Logf("going offline: %v", cerr)
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// ToolNames lists the tools the server offers, sorted.
func ToolNames() []string {
	var out []string
	for _, t := range toolSet() {
		out = append(out, t.name)
	}
	sort.Strings(out)
	return out
}

// toolTimeout bounds one tool call.
const toolTimeout = 30 * time.Second

// handler runs one tool: the arguments are checked against its closed
// contract before anything runs; a refusal or failure is a tool error
// whose text the model reads.
func (s *Server) handler(t *tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, toolTimeout)
		defer cancel()
		text, err := t.run(ctx, s, req.Params.Arguments)
		res := &sdk.CallToolResult{}
		if err != nil {
			res.SetError(err)
			return res, nil
		}
		res.Content = []sdk.Content{&sdk.TextContent{Text: text}}
		return res, nil
	}
}
