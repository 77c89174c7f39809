package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/bench"
	"github.com/cotal-go/cotal/internal/quit"
)

func newBenchCmd(g *globals) *cobra.Command {
	var asJSON, quick bool
	var budget time.Duration
	var only []string
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
It measures its own mesh only: a running mesh (--url) is not supported yet.

Paths: ` + strings.Join(bench.Paths(), "; ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if quick && cmd.Flags().Changed("time") {
				return usagef("--quick and --time both set how long to measure: give one")
			}
			if quick {
				budget = 10 * time.Second
			}
			if budget < time.Second {
				return usagef("--time %s is too short: give at least 1s", budget)
			}
			for _, p := range only {
				if !slices.Contains(bench.Paths(), p) {
					return usagef("no path is named %q: the paths are %s", p, strings.Join(bench.Paths(), "; "))
				}
			}
			ctx, stop := quit.Until(cmd.Context(), nil)
			defer stop()
			progress := func(done, total int, p string) {
				fmt.Fprintf(g.stderr, "\rbench: %d/%d %-40s", done+1, total, p)
			}
			rows, err := bench.Run(ctx, bench.Options{Budget: budget, Only: only, Progress: progress})
			fmt.Fprintf(g.stderr, "\r%-60s\r", "")
			if err != nil && rows == nil {
				return err
			}
			if asJSON {
				printJSON(g.stdout, rows)
			} else {
				printBench(g, rows)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the rows as JSON")
	f.BoolVar(&quick, "quick", false, "measure for about ten seconds instead of a minute")
	f.DurationVar(&budget, "time", time.Minute, "how long to measure in all (set-up not counted)")
	f.StringSliceVar(&only, "path", nil, "measure only these paths (by name; repeat or comma-separate)")
	return cmd
}

// printBench prints the rows as a table.
func printBench(g *globals, rows []bench.Result) {
	tw := tabwriter.NewWriter(g.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tCOTAL P50\tP99\tFLOOR P50\tP99\tRATIO\tGOAL\tMET\tFLOOR")
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%s\terror\t%s\n", r.Path, r.Goal, r.Error)
			continue
		}
		met := "no"
		if r.Met {
			met = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2fx\t%s\t%s\t%s\n", r.Path, benchFig(r.Cotal.P50, r.Unit), benchFig(r.Cotal.P99, r.Unit),
			benchFig(r.Floor.P50, r.Unit), benchFig(r.Floor.P99, r.Unit), r.Ratio, r.Goal, met, r.Base)
	}
	_ = tw.Flush()
	fmt.Fprintln(g.stdout, "ratio: cotal p50 over floor p50 (lower is better), both measured in this run")
}

// benchFig prints a figure in µs, or in ms from 10 ms up.
func benchFig(v float64, unit string) string {
	if unit == "µs" && v >= 10000 {
		return fmt.Sprintf("%.1f ms", v/1000)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}
