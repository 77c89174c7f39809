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
	"github.com/cotal-go/cotal/mesh"
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
	in := mcp.Acting{Creds: g.creds, Source: source, URL: g.server, Space: g.space, Name: name}.InSeat(os.Getenv)
	manager, creds, url, uid := in.Manager, in.Creds, in.URL, in.UID
	g.space, name, source = in.Space, in.Name, in.Source
	self := mcp.Identity{Name: name, Space: g.space}
	if creds != "" {
		info, err := loadCreds(creds, source)
		if err != nil {
			return err
		}
		if g.space == "" {
			g.space = info.Space
		}
		self = mcp.Identity{ID: info.Principal.ID(), Name: info.Principal.Actor, Role: info.Role, Space: clirender.OrDefault(info.Space, g.space)}
	} else if name == "" {
		return usagef("cotal mcp acts as one identity: pass --creds FILE (mint one with `cotal mint <name>`), or --name on an open mesh, or run it inside a seat")
	}
	logf := func(format string, args ...any) { fmt.Fprintf(g.stderr, "cotal mcp: "+format+"\n", args...) }
	dial := func(ctx context.Context) (*mesh.Endpoint, error) {
		o := mesh.Options{Creds: creds, URL: url, Space: g.space, OneShot: manager != "", Logf: logf}
		if manager != "" {
			o.Subscribe = []string{} // the seat's connector holds its channels
		}
		if creds == "" {
			o.Name, o.LifecycleUID = name, uid
		}
		if url == "" {
			t, err := g.resolveTarget()
			if err != nil {
				return nil, err
			}
			if creds == "" && t.Record.Mode != config.ModeOpen {
				return nil, fmt.Errorf("mesh %s needs a credential: pass --creds (mint one with `cotal mint %s`)", t.Paths.Space, name)
			}
			o.URL, o.Space = t.URL, t.Paths.Space
		}
		return mesh.Connect(ctx, o)
	}
	srv := mcp.New(mcp.Options{Dial: dial, Manager: manager, Self: self, Version: version, Logf: logf})
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
			if err != nil {
				return err
			}
			if exe, err = filepath.EvalSymlinks(exe); err != nil {
				return err
			}
			argv := []string{exe, "mcp"}
			switch {
			case g.creds != "":
				abs, err := filepath.Abs(g.creds)
				if err != nil {
					return err
				}
				if _, err := loadCreds(abs, credsSource(cmd)); err != nil {
					return err
				}
				argv = append(argv, "--creds", abs)
			case *name != "":
				argv = append(argv, "--name", *name)
				if g.space != "" {
					argv = append(argv, "--space", g.space)
				}
			default:
				return usagef("say who the agent is: --creds FILE (mint one with `cotal mint <name>`), or --name on an open mesh")
			}
			if g.server != "" {
				argv = append(argv, "--server", g.server)
			}
			out, err := mcp.ClientConfig(args[0], argv)
			if err != nil {
				return usage(err)
			}
			if asJSON {
				printJSON(g.stdout, map[string]any{"client": args[0], "command": argv[0], "args": argv[1:], "instructions": out})
				return nil
			}
			fmt.Fprint(g.stdout, out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the command that runs the server, and the instructions, as JSON")
	return cmd
}
