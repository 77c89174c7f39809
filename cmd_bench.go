package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/bench"
	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/internal/quit"
)

func newBenchCmd(g *globals) *cobra.Command {
	var asJSON, quick bool
	var o bench.Options
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure each of cotal's paths next to its floor on this machine",
		Long: `bench starts a private mesh (an embedded broker, delivery and a manager) in
a temporary store, measures each cotal path and its floor, the same work done
with bare NATS or a bare pty, side by side in the same run, and prints one
row per path: cotal p50/p99, floor p50/p99, their ratio, the goal and whether
it is met. Only the ratio means much on a shared machine. It measures for
about a minute (--quick: ten seconds); setting up the hundred-member paths
adds half a minute or more. A progress line goes to stderr while it runs.
With --url it runs the same paths on a running NATS server or cluster with
JetStream and no auth instead: delivery and a manager start here, on an open
space of their own there (bench_ and ten letters), removed again after the
run. Left out there: up to ready, which starts a mesh of its own, and the
durable fan-out rows, whose members need minted identities.

Paths: ` + strings.Join(bench.Paths(), "; ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if quick && cmd.Flags().Changed("time") {
				return cliargs.Usagef("--quick and --time both set how long to measure: give one")
			}
			if quick {
				o.Budget = 10 * time.Second
			}
			if err := o.Check(); err != nil {
				return cliargs.UsageError{Err: err}
			}
			ctx, stop := quit.Until(cmd.Context(), nil)
			defer stop()
			var clear func()
			o.Progress, clear = clirender.BenchProgress(g.stderr)
			rows, err := bench.Run(ctx, o)
			clear()
			if err != nil && rows == nil {
				return err
			}
			clirender.Bench(g.stdout, rows, asJSON)
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the rows as JSON")
	f.BoolVar(&quick, "quick", false, "measure for about ten seconds instead of a minute")
	f.DurationVar(&o.Budget, "time", time.Minute, "how long to measure in all (set-up not counted)")
	f.StringSliceVar(&o.Only, "path", nil, "measure only these paths (by name; repeat or comma-separate)")
	f.StringSliceVar(&o.URLs, "url", nil, "run on these NATS servers (JetStream on, no auth) instead of a private embedded broker (nats://host:port; repeat or comma-separate)")
	return cmd
}
