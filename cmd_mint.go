package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/broker"
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
			if s, err := host.Probe(p); err == nil {
				if rec, err := s.Serving(); err == nil && rec.Mode == config.ModeOpen {
					return usagef("mesh %s runs in open mode: it takes no credentials (restart it without --open to use them)", p.Space)
				}
			}
			id := broker.Identity{
				Space: p.Space, Principal: wire.Principal{Owner: "local", Actor: name},
				Profile: prof, Role: role, Subscribe: subscribe, Capabilities: caps,
				AllowSubscribe: wire.SameAsSubscribe(subscribe),
			}
			if cmd.Flags().Changed("allow-subscribe") {
				id.AllowSubscribe = nonNilList(allowSub)
			}
			if cmd.Flags().Changed("allow-publish") {
				id.AllowPublish = nonNilList(allowPub)
			}
			agentFile, err := applyAgentFile(g, cmd, name, &id)
			if err != nil {
				return err
			}
			if err := id.Normalize(); err != nil {
				if agentFile != "" {
					return usagef("%s: %w", agentFile, err)
				}
				return usage(err)
			}
			nc, err := host.ConnectIfRunning(p, "cotal mint")
			if err != nil {
				return fmt.Errorf("%w (minting revokes the earlier credentials of %s on it)", err, name)
			}
			if nc != nil {
				defer nc.Close()
			}
			ctx, cancel := ctxTimeout()
			defer cancel()
			earlier, err := issue.Lifecycles(p, id.Principal)
			if err != nil {
				return err
			}
			c, provisioned, err := issue.Mint(ctx, p, id, nc)
			if errors.Is(err, issue.ErrReservedName) {
				return usage(err)
			}
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(p.CredsDir(), name+".creds")
				if err := config.EnsureDir(p.CredsDir(), 0o700); err != nil {
					return err
				}
			}
			if err := broker.WriteCreds(out, c); err != nil {
				return err
			}
			abs, _ := filepath.Abs(out)
			if !host.SeatsCannotRead(p, abs) {
				fmt.Fprintf(g.stderr, "cotal: warning: %s is where a seat can read it: a seat runs as you, sees every folder but the store's protected ones, and could act as %s with it. Leave out --out to keep it under the store, or keep the file where no seat runs.\n", abs, name)
			}
			if asJSON {
				res := map[string]any{
					"principal": c.Identity.Principal.ID(), "lifecycleUid": c.Identity.UID, "profile": c.Identity.Profile,
					"role": c.Identity.Role, "creds": abs, "space": p.Space, "provisioned": provisioned,
					"subscribe": nonNilList(c.Identity.Subscribe), "allowSubscribe": nonNilList(c.Identity.AllowSubscribe),
					"allowPublish": nonNilList(c.Identity.AllowPublish), "capabilities": nonNilList(c.Identity.Capabilities),
					"revoked": nonNilList(earlier),
				}
				if agentFile != "" {
					res["agentFile"] = agentFile
				}
				b, _ := json.MarshalIndent(res, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			if agentFile != "" {
				fmt.Fprintf(g.stdout, "from %s\n", agentFile)
			}
			fmt.Fprintf(g.stdout, "principal     %s\n", c.Identity.Principal.ID())
			fmt.Fprintf(g.stdout, "lifecycle uid %s\n", c.Identity.UID)
			fmt.Fprintf(g.stdout, "profile       %s\n", c.Identity.Profile)
			if c.Identity.Role != "" {
				fmt.Fprintf(g.stdout, "role          %s\n", c.Identity.Role)
			}
			if prof == wire.ProfileAgent {
				fmt.Fprintf(g.stdout, "read          %s\n", listOrNone(c.Identity.AllowSubscribe))
				fmt.Fprintf(g.stdout, "post          %s\n", listOrNone(c.Identity.AllowPublish))
				if len(c.Identity.Capabilities) > 0 {
					fmt.Fprintf(g.stdout, "capabilities  %s\n", strings.Join(c.Identity.Capabilities, ", "))
				}
			}
			fmt.Fprintf(g.stdout, "creds         %s (0600)\n", abs)
			if len(earlier) > 0 {
				where := "on the running mesh"
				if nc == nil {
					where = "from the next `cotal up`"
				}
				fmt.Fprintf(g.stdout, "revoked       %s (earlier credentials of %s, refused %s)\n", strings.Join(earlier, ", "), name, where)
			}
			if provisioned {
				fmt.Fprintln(g.stdout, "inbox         ready on the running mesh")
			} else {
				fmt.Fprintln(g.stdout, "inbox         created by the next `cotal up`")
			}
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
// the project's .cotal/agents/<name>.md when no ACL flag is given, and
// returns the file's path ("" when none was used). A broken file is bad
// input: it is never skipped silently.
func applyAgentFile(g *globals, cmd *cobra.Command, name string, id *broker.Identity) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", nil
	}
	path, ok := config.FindAgentFile(cwd, name)
	if !ok {
		return "", nil
	}
	for _, f := range aclFlags {
		if cmd.Flags().Changed(f) {
			fmt.Fprintf(g.stderr, "cotal: ignoring %s: ACL flags given\n", path)
			return "", nil
		}
	}
	if id.Profile != wire.ProfileAgent {
		fmt.Fprintf(g.stderr, "cotal: ignoring %s: --profile %s takes no agent ACL\n", path, id.Profile)
		return "", nil
	}
	a, err := config.LoadAgentFile(path)
	if err != nil {
		var fe *config.AgentFileError
		if errors.As(err, &fe) {
			return "", usage(err)
		}
		return "", fmt.Errorf("reading agent file: %w", err)
	}
	id.Role = a.Role
	id.Subscribe = a.Subscribe
	id.AllowSubscribe = a.AllowSubscribe
	id.AllowPublish = a.AllowPublish
	id.Capabilities = a.Capabilities
	return path, nil
}

func nonNilList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}
