package launch

import (
	"context"
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/internal/quit"
	"github.com/cotal-go/cotal/mcp"
)

// MCPOptions are the flags of `cotal mcp`.
type MCPOptions struct {
	Name    string // on an open mesh: the name to appear as
	Source  string // how the creds were named, for a refusal
	Version string // cotal's, which the server reports
}

// MCP is `cotal mcp`: the MCP server on stdio until its client goes or a
// quit signal, acting as the seat it runs in (through the seat's
// connector), else as --creds, else as --name on an open mesh. It dials
// as the caller does: --server, --tls-pin or --tls-ca, else the record.
func MCP(c Caller, o MCPOptions) error {
	tlsCfg, err := c.TLS.ClientConfig()
	if err != nil {
		return cliargs.UsageError{Err: err}
	}
	a := mcp.Acting{Creds: c.Creds, Source: o.Source, URL: c.Server, TLS: tlsCfg, Space: c.Space, Name: o.Name}.InSeat(os.Getenv)
	self := mcp.Identity{Name: a.Name, Space: a.Space}
	if a.Creds != "" {
		info, err := config.LoadCreds(a.Creds)
		if err != nil {
			return cliargs.NamedCreds(err, a.Source)
		}
		a.Space = clirender.OrDefault(a.Space, info.Space)
		self = a.Self(info)
	} else if a.Name == "" {
		return cliargs.Usagef("cotal mcp acts as one identity: pass --creds FILE (mint one with `cotal mint <name>`), or --name on an open mesh, or run it inside a seat")
	}
	c.Space = a.Space
	logf := func(format string, args ...any) { fmt.Fprintf(c.Err, "cotal mcp: "+format+"\n", args...) }
	dial := a.Dialer(func() (mcp.Target, error) {
		t, err := c.Target()
		if err != nil {
			return mcp.Target{}, err
		}
		tc, err := t.TLS()
		return mcp.Target{URL: t.URL, TLS: tc, Space: t.Paths.Space, Open: t.Record.Mode == config.ModeOpen}, err
	}, logf)
	srv := mcp.New(mcp.Options{Dial: dial, Manager: a.Manager, Self: self, Version: o.Version, Logf: logf})
	ctx, stop := quit.Until(context.Background(), nil)
	defer stop()
	return srv.Run(ctx, &sdk.StdioTransport{})
}
