package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/tui/line"
)

func newJoinCmd(g *globals) *cobra.Command {
	var j clirun.Joining
	cmd := &cobra.Command{
		Use:   "join --name N [--role R] [--channel C]...",
		Short: "Be on the mesh from this terminal: arrivals print as they come, typed lines are sent",
		Long: `Join the mesh as a person at a terminal. Arrivals (DMs, tasks for your
role, posts on your channels) print as they come and are acknowledged once
printed. Typed lines are sent.

In the default mode the name gets its own credential, minted for it with read
and post rights on every channel (or use --creds). It shows on the roster
until you leave.

` + line.Help,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.caller().InSeat() != "" {
				return clirun.SeatJoin(g.caller(), j.Channels, func(r client.JoinedReply) { fmt.Fprintln(g.stdout, r.Summary) })
			}
			ctx, stop := untilQuit(cmd.Context(), nil)
			defer stop()
			return clirun.Join(ctx, g.caller(), j, g.stdin, g.stdout, g.stderr)
		},
	}
	cmd.Flags().StringVar(&j.Name, "name", "", "your name on the mesh (required unless --creds)")
	cmd.Flags().StringVar(&j.Role, "role", "", "a role whose tasks you take")
	cmd.Flags().StringSliceVar(&j.Channels, "channel", nil, "channel to join (repeatable); the first is where plain lines go")
	return cmd
}

func newSetStatusCmd(g *globals) *cobra.Command {
	var asJSON bool
	return withJSON(&cobra.Command{
		Use:   "set-status <idle|waiting|working> [activity...]",
		Short: "Inside a seat: set the seat's status and activity on the roster",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := clirun.SetStatus(g.caller(), args[0], args[1:])
			return shown(err, func() { clirender.StatusSet(g.stdout, r, asJSON) })
		},
	}, &asJSON, "print as JSON")
}

func newLeaveCmd(g *globals) *cobra.Command {
	var asJSON bool
	return withJSON(&cobra.Command{
		Use:   "leave <channel>",
		Short: "Inside a seat: leave a channel (its durable hold ends first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			left, err := clirun.Leave(g.caller(), args[0])
			return shown(err, func() { clirender.Left(g.stdout, args[0], left, asJSON) })
		},
	}, &asJSON, "print as JSON")
}

func newMintCmd(g *globals) *cobra.Command {
	var r clirun.MintRequest
	var asJSON bool
	cmd := withJSON(&cobra.Command{
		Use:   "mint <name>",
		Short: "Mint a credential (0600 creds file) for an agent, observer or operator",
		Long: `Mint a user credential for <name> in the space. The broker enforces it:
the holder can post only as itself, only to channels --allow-publish covers,
and read only channels --allow-subscribe covers (default: the --subscribe list).

The creds file carries the principal and its lifecycle uid, so a client that
reads it needs no other flag. On a running mesh the identity's DM inbox and
role queue are created at once, so messages sent before it first connects wait
for it; otherwise they are created by the next "cotal up".

Minting a name again revokes its earlier credentials: on a running mesh their
connections are closed before mint returns, otherwise the next "cotal up"
refuses them. Minting needs the space's signing key, so it runs as the local
user, never with --creds.

ACL entries are channel names or patterns (team.backend, team.*, team.>).

With none of --role, --subscribe, --allow-subscribe or --allow-publish, an
agent's role and channel lists come from the project's agent file
.cotal/agents/<name>.md when there is one; any of those flags sets them all
and the file is ignored.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r.Name, r.Given = args[0], cmd.Flags().Changed
			m, err := clirun.Mint(g.caller(), r)
			if clirender.MintNotes(g.stderr, r.Name, m); err != nil {
				return err
			}
			clirender.Mint(g.stdout, asJSON, r.Name, m.Space, m.AgentFile, m.Minted)
			return nil
		},
	}, &asJSON, "print the result as JSON")
	fl := cmd.Flags()
	fl.StringVar(&r.Profile, "profile", string(wire.ProfileAgent), "agent, observer or operator")
	fl.StringVar(&r.Role, "role", "", "anycast role the identity serves")
	fl.StringSliceVar(&r.Subscribe, "subscribe", nil, "channels joined at connect (comma-separated)")
	fl.StringSliceVar(&r.AllowSubscribe, "allow-subscribe", nil, "read ACL (default: the --subscribe list)")
	fl.StringSliceVar(&r.AllowPublish, "allow-publish", nil, "post ACL (default: none)")
	fl.StringSliceVar(&r.Capabilities, "capability", nil, "control-surface capability: spawn (ask the manager for seats); repeatable")
	fl.StringVarP(&r.Out, "out", "o", "", "where to write the creds file (default: the store's auth/creds/<name>.creds, which seats cannot read; elsewhere a seat can, and mint warns)")
	return cmd
}

func newLeafCredsCmd(g *globals) *cobra.Command {
	var out string
	var asJSON bool
	cmd := withJSON(&cobra.Command{
		Use:   "leaf-creds <leaf>",
		Short: "On a hub: mint the credential another machine's mesh links to this one with (up --leaf)",
		Long: `Mint the 0600 link credential of leaf <leaf> (its JetStream domain, lower case) and
record it as this hub's leaf, sourced at once on a running hub (README: "Past one machine").
Minting it again for the same leaf revokes the one before: a running hub
closes the link that one holds.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			m, err := clirun.MintLink(g.caller(), args[0], out)
			return shown(err, func() { clirender.LinkMinted(g.stdout, asJSON, m) })
		},
	}, &asJSON, "print the result as JSON")
	cmd.Flags().StringVarP(&out, "out", "o", "", "where to write the creds file (default: the store's auth/creds/link-<leaf>.creds)")
	return cmd
}
