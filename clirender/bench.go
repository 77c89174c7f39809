package clirender

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cotal-go/cotal/bench"
)

// Bench prints `cotal bench`'s rows: as JSON, or as a table and what its
// ratio means.
func Bench(w io.Writer, rows []bench.Result, asJSON bool) {
	if asJSON {
		JSON(w, rows)
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
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
	fmt.Fprintln(w, "ratio: cotal p50 over floor p50 (lower is better), both measured in this run")
}

// BenchProgress is the progress line a bench keeps rewriting on w, and
// what clears it once the bench ends.
func BenchProgress(w io.Writer) (progress func(done, total int, path string), clear func()) {
	return func(done, total int, p string) { fmt.Fprintf(w, "\rbench: %d/%d %-40s", done+1, total, p) },
		func() { fmt.Fprintf(w, "\r%-60s\r", "") }
}

// benchFig prints a figure in µs, or in ms from 10 ms up.
func benchFig(v float64, unit string) string {
	if unit == "µs" && v >= 10000 {
		return fmt.Sprintf("%.1f ms", v/1000)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}
