package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirun"
)

func newBrokerCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Run a space's mesh on NATS servers you run (see broker config)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newBrokerConfigCmd(g))
	return cmd
}

func newBrokerConfigCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print what to add to your nats-server configuration so it trusts this space's credentials",
		Long: `Print the nats-server configuration block that makes a server or cluster
you run trust the space's credentials, as nsc would generate it: the space's
operator JWT, its system account, and a memory resolver preloaded with the
system and space account JWTs. Add it to every server's configuration (with
JetStream on), reload them, then start the mesh there:

  cotal broker config > cotal-trust.conf     # include it from nats-server.conf
  cotal up --url nats://a:4222,nats://b:4222,nats://c:4222

The mesh then mints every credential itself and pushes revocations through
the system account. A memory resolver forgets pushed revocations when a
server restarts: print the block again (it carries every revocation so far)
and reload after one. Nothing in the block is secret; the keys stay in the
store. The first run creates the space's keys.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			auth, err := clirun.Authority(g.caller())
			switch {
			case err != nil:
				return err
			case asJSON:
				return g.resultJSON(auth.Trusted())
			}
			fmt.Fprint(g.stdout, auth.ServerConfig())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the operator, accounts and the block as JSON")
	return cmd
}
