package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/seat/client"
)

// The commands a harness runs: its MCP server and its hooks.

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
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := untilQuit(context.Background(), nil)
			defer stop()
			logf := func(format string, args ...any) { fmt.Fprintf(g.stderr, "cotal mcp: "+format+"\n", args...) }
			return clirun.ServeMCP(ctx, g.caller(), name, cliargs.CredsSource(cmd), version, logf)
		},
	}
	cmd.PersistentFlags().StringVar(&name, "name", "", "on an open mesh (no credentials): the name to appear as")
	var asJSON bool
	cmd.AddCommand(withJSON(&cobra.Command{
		Use:   "config <claude|codex|opencode>",
		Short: "Print what to add to an MCP client's configuration to run cotal mcp",
		Long: `Print exactly what to add to Claude Code's, Codex's or opencode's
configuration so that it runs this cotal binary's MCP server as --creds (or,
on an open mesh, as --name). Paths are made absolute.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: mcp.Clients,
		RunE: func(cmd *cobra.Command, args []string) error {
			argv, out, err := clirun.MCPConfig(g.caller(), args[0], name, cliargs.CredsSource(cmd))
			return shown(err, func() { clirender.MCPConfig(g.stdout, args[0], argv, out, asJSON) })
		},
	}, &asJSON, "print the command that runs the server, and the instructions, as JSON"))
	return cmd
}

func newHookCmd(g *globals) *cobra.Command {
	var stream bool
	cmd := &cobra.Command{
		Use:   "hook <event> | hook --stream",
		Short: "Inside a seat: what the harness's hooks run (Claude Code's settings call it for each event)",
		Long: `Run by a seat's harness for one of its hook events, with the event's JSON
on stdin: it hands the event to the seat's connector (through the manager
hosting the seat, as the seat) and prints what the hook answers: the
messages waiting for the model as added context, a person's approve or deny
for a permission prompt. It never breaks the harness's session: on any
failure it prints nothing, exits 0, and says why on stderr and, when it can,
in the manager's log. Outside a seat it does nothing.

With --stream it stays up for a harness plugin that lives as long as its
harness (opencode's): one event a line on stdin, {"id": N, "event": E,
"input": {...}}, and one line back on stdout for each, {"id": N,
"output": "..."} (with "error" when it failed), each event handled as its
own hook would be. It ends when stdin does. Unable to act for a seat (not
in one, no creds, no mesh), it exits 1 at once, saying why on stderr, so
that the plugin runs a hook per event instead.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if stream {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		// Its creds are read when it runs, so a bad one is reported, not
		// an exit status the harness would show.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if stream { // not in a seat, or not reaching the mesh, it fails at once: its plugin goes back to a hook per event
				err := clirun.AsSeat(ctx, g.caller(), func(ctx context.Context, s client.Self) error {
					return s.RunHookStream(ctx, g.stdin, g.stdout, g.stderr)
				})
				if err != nil {
					fmt.Fprintf(g.stderr, "cotal hook --stream: %v\n", err)
					return exitError{exitFail}
				}
				return nil
			}
			input, err := client.ReadHookInput(g.stdin)
			if err == nil {
				err = clirun.AsSeat(ctx, g.caller(), func(ctx context.Context, s client.Self) error { return s.RunHook(ctx, args[0], input, g.stdout) })
			}
			if err != nil { // only printed: a hook never breaks its harness's session
				fmt.Fprintf(g.stderr, "cotal hook %s: %v\n", args[0], err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&stream, "stream", false, "stay up and take one event a line of JSON on stdin, answering each with a line on stdout")
	return cmd
}
