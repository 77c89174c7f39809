package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mcp"
)

func newMCPCmd(g *globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the cotal_* tools to an AI agent over stdio (an MCP server)",
		Long: `Serve the cotal_* tools (orientation, inbox, send, dm, anycast, roster,
status, channels, join, leave...) over stdio to an MCP client such as Claude
Code, Codex or opencode, acting as one identity.

Inside a seat it acts as the seat, through the seat's connector in its
manager. Elsewhere it acts as --creds (or COTAL_CREDS), an identity minted
with "cotal mint", and stays on the mesh while its client runs; on an open
mesh --name names it instead. It starts even when the mesh is down, and its
tools say so until the mesh is back.

"cotal mcp config claude|codex|opencode --creds FILE" prints what to add to
that client's configuration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCP(g, name, credsSource(cmd)) },
	}
	cmd.PersistentFlags().StringVar(&name, "name", "", "on an open mesh (no credentials): the name to appear as")
	cmd.AddCommand(newMCPConfigCmd(g, &name))
	return cmd
}

// runMCP wires the server to the mesh: managed inside a seat, standalone
// otherwise.
func runMCP(g *globals, name, source string) error {
	a := mcp.Acting{Creds: g.creds, Source: source, URL: g.server, Space: g.space, Name: name}.InSeat(os.Getenv)
	self := mcp.Identity{Name: a.Name, Space: a.Space}
	if a.Creds != "" {
		info, err := loadCreds(a.Creds, a.Source)
		if err != nil {
			return err
		}
		a.Space = clirender.OrDefault(a.Space, info.Space)
		self = a.Self(info)
	} else if a.Name == "" {
		return usagef("cotal mcp acts as one identity: pass --creds FILE (mint one with `cotal mint <name>`), or --name on an open mesh, or run it inside a seat")
	}
	g.space = a.Space
	logf := func(format string, args ...any) { fmt.Fprintf(g.stderr, "cotal mcp: "+format+"\n", args...) }
	dial := a.Dialer(func() (mcp.Target, error) {
		t, err := g.caller().Target()
		return mcp.Target{URL: t.URL, Space: t.Paths.Space, Open: t.Record.Mode == config.ModeOpen}, err
	}, logf)
	srv := mcp.New(mcp.Options{Dial: dial, Manager: a.Manager, Self: self, Version: version, Logf: logf})
	ctx, stop := untilQuit(context.Background(), nil)
	defer stop()
	return srv.Run(ctx, &sdk.StdioTransport{})
}

func newMCPConfigCmd(g *globals, name *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "config <claude|codex|opencode>",
		Short: "Print what to add to an MCP client's configuration to run cotal mcp",
		Long: `Print exactly what to add to Claude Code's, Codex's or opencode's
configuration so that it runs this cotal binary's MCP server as --creds (or,
on an open mesh, as --name). Paths are made absolute.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: mcp.Clients,
		RunE: func(cmd *cobra.Command, args []string) error {
			exe, err := os.Executable()
			if err == nil {
				exe, err = filepath.EvalSymlinks(exe)
			}
			creds := g.creds
			if err == nil && creds != "" {
				if creds, err = filepath.Abs(creds); err == nil {
					_, err = loadCreds(creds, credsSource(cmd))
				}
			}
			if err != nil {
				return err
			}
			argv, err := mcp.Command(exe, creds, *name, g.space, g.server)
			if err != nil {
				return usage(err)
			}
			out, err := mcp.ClientConfig(args[0], argv)
			if err != nil {
				return usage(err)
			}
			clirender.MCPConfig(g.stdout, args[0], argv, out, asJSON)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the command that runs the server, and the instructions, as JSON")
	return cmd
}
