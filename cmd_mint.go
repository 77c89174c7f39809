package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/mesh/wire"
)

func newMintCmd(g *globals) *cobra.Command {
	var r clirun.MintRequest
	var asJSON bool
	cmd := &cobra.Command{
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
	}
	fl := cmd.Flags()
	fl.StringVar(&r.Profile, "profile", string(wire.ProfileAgent), "agent, observer or operator")
	fl.StringVar(&r.Role, "role", "", "anycast role the identity serves")
	fl.StringSliceVar(&r.Subscribe, "subscribe", nil, "channels joined at connect (comma-separated)")
	fl.StringSliceVar(&r.AllowSubscribe, "allow-subscribe", nil, "read ACL (default: the --subscribe list)")
	fl.StringSliceVar(&r.AllowPublish, "allow-publish", nil, "post ACL (default: none)")
	fl.StringSliceVar(&r.Capabilities, "capability", nil, "control-surface capability: spawn (ask the manager for seats); repeatable")
	fl.StringVarP(&r.Out, "out", "o", "", "where to write the creds file (default: the store's auth/creds/<name>.creds, which seats cannot read; elsewhere a seat can, and mint warns)")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
