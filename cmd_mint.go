package main

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/wire"
)

func newMintCmd(g *globals) *cobra.Command {
	var (
		profile, role, out                  string
		subscribe, allowSub, allowPub, caps []string
		asJSON                              bool
	)
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
			if g.creds != "" {
				return usagef("minting needs the space's signing key, not a credential: run `cotal mint` as the local user, without --creds (or COTAL_CREDS)")
			}
			name := args[0]
			if !wire.ValidToken(name) {
				return usagef("name %q must be one token of A-Z a-z 0-9 _ (at most 64; no . * > - or spaces)", name)
			}
			prof, err := wire.ParseProfile(profile)
			if err != nil {
				return usage(err)
			}
			_, p, _, err := g.paths()
			if err != nil {
				return err
			}
			if err := host.Mintable(p); err != nil {
				return usage(err)
			}
			id := broker.Identity{
				Space: p.Space, Principal: wire.Principal{Owner: "local", Actor: name},
				Profile: prof, Role: role, Subscribe: subscribe, Capabilities: caps,
				AllowSubscribe: wire.SameAsSubscribe(subscribe),
			}
			if cmd.Flags().Changed("allow-subscribe") {
				id.AllowSubscribe = clirender.NonNil(allowSub)
			}
			if cmd.Flags().Changed("allow-publish") {
				id.AllowPublish = clirender.NonNil(allowPub)
			}
			agentFile, err := applyAgentFile(g, cmd, name, &id)
			if err != nil {
				return err
			}
			ctx, cancel := ctxTimeout()
			defer cancel()
			m, err := host.Mint(ctx, p, id, agentFile, out)
			if errors.As(err, new(*host.RefusedError)) {
				return usage(err)
			}
			if err != nil {
				return err
			}
			if m.Readable {
				fmt.Fprintf(g.stderr, "cotal: warning: %s is where a seat can read it: a seat runs as you, sees every folder but the store's protected ones, and could act as %s with it. Leave out --out to keep it under the store, or keep the file where no seat runs.\n", m.Path, name)
			}
			clirender.Mint(g.stdout, asJSON, name, p.Space, agentFile, m)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&profile, "profile", string(wire.ProfileAgent), "agent, observer or operator")
	fl.StringVar(&role, "role", "", "anycast role the identity serves")
	fl.StringSliceVar(&subscribe, "subscribe", nil, "channels joined at connect (comma-separated)")
	fl.StringSliceVar(&allowSub, "allow-subscribe", nil, "read ACL (default: the --subscribe list)")
	fl.StringSliceVar(&allowPub, "allow-publish", nil, "post ACL (default: none)")
	fl.StringSliceVar(&caps, "capability", nil, "control-surface capability: spawn (ask the manager for seats); repeatable")
	fl.StringVarP(&out, "out", "o", "", "where to write the creds file (default: the store's auth/creds/<name>.creds, which seats cannot read; elsewhere a seat can, and mint warns)")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// aclFlags are the mint flags that set what an agent file would; any one of
// them makes the flags the whole ACL and the file is not read.
var aclFlags = []string{"subscribe", "allow-subscribe", "allow-publish", "role", "capability"}

// applyAgentFile takes the role and channel lists of an agent identity from
// the project's .cotal/agents/<name>.md when no ACL flag is given
// (issue.FromAgentFile), and returns the file's path ("" when none was
// used). A broken file is bad input.
func applyAgentFile(g *globals, cmd *cobra.Command, name string, id *broker.Identity) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", nil
	}
	path, ignored, err := issue.FromAgentFile(cwd, name, slices.ContainsFunc(aclFlags, cmd.Flags().Changed), id)
	if errors.As(err, new(*config.AgentFileError)) {
		return "", usage(err)
	}
	if ignored != "" {
		fmt.Fprintf(g.stderr, "cotal: ignoring %s\n", ignored)
	}
	return path, err
}
