package clirun

import (
	"context"
	"os"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mcp"
)

// ServeMCP serves the cotal_* tools over stdio until ctx ends, as one
// identity: inside a seat the seat, through its connector; else the
// caller's creds (source says how they were named), or name on an open
// mesh. With none of them it is bad input. It dials as the caller does:
// --server, --tls-pin or --tls-ca, else the record. version is the
// binary's.
func ServeMCP(ctx context.Context, c Caller, name, source, version string, logf func(string, ...any)) error {
	tlsCfg, err := c.TLS.ClientConfig()
	if err != nil {
		return bad(err)
	}
	a := mcp.Acting{Creds: c.Creds, Source: source, URL: c.Server, TLS: tlsCfg, Space: c.Space, Name: name}.InSeat(os.Getenv)
	self := mcp.Identity{Name: a.Name, Space: a.Space}
	if a.Creds != "" {
		info, err := cliargs.LoadCreds(a.Creds, a.Source)
		if err != nil {
			return err
		}
		if a.Space == "" {
			a.Space = info.Space
		}
		self = a.Self(info)
	} else if a.Name == "" {
		return usagef("cotal mcp acts as one identity: pass --creds FILE (mint one with `cotal mint <name>`), or --name on an open mesh, or run it inside a seat")
	}
	c.Space = a.Space
	dial := a.Dialer(func() (mcp.Target, error) {
		t, err := c.Target()
		if err != nil {
			return mcp.Target{}, err
		}
		tc, err := t.TLS()
		return mcp.Target{URL: t.URL, TLS: tc, Space: t.Paths.Space, Open: t.Record.Mode == config.ModeOpen}, err
	}, logf)
	srv := mcp.New(mcp.Options{Dial: dial, Manager: a.Manager, Self: self, Version: version, Logf: logf})
	return srv.Run(ctx, &sdk.StdioTransport{})
}

// MCPConfig is what to add to an MCP client's configuration (mcp.Clients)
// so that it runs this binary's server as the caller's creds (source says
// how they were named; made absolute) or as name: the command, and the
// text to add.
func MCPConfig(c Caller, to, name, source string) (argv []string, text string, err error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	creds := c.Creds
	if err == nil && creds != "" {
		if creds, err = filepath.Abs(creds); err == nil {
			_, err = cliargs.LoadCreds(creds, source)
		}
	}
	if err != nil {
		return nil, "", err
	}
	if argv, err = mcp.Command(exe, creds, name, c.Space, c.Server, c.TLS.Pin, c.TLS.CA); err == nil {
		text, err = mcp.ClientConfig(to, argv)
	}
	if err != nil {
		return nil, "", bad(err)
	}
	return argv, text, nil
}
