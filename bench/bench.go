// Package bench measures cotal's paths next to their floors, each pair in
// the same run on the same machine against a private embedded mesh in a
// temporary store: what `cotal bench` prints. The machines it runs on are
// shared and noisy, so the ratio of a path to its floor is the figure,
// never a time on its own. It imports the mesh's packages and never
// package main.
package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cotal-go/cotal/broker"
)

// Options says how long to measure and whom to tell how far it is.
type Options struct {
	// Budget is the whole run's measuring time, shared out over the paths
	// (set-up not counted); 0 is a minute.
	Budget time.Duration
	// Only, when not empty, keeps the paths whose name it holds.
	Only []string
	// Progress, when set, is told before each path starts.
	Progress func(done, total int, path string)
	// URLs, when set, name a running NATS server or cluster with
	// JetStream and no auth: the paths run on an open space of their own
	// there (removed after) instead of on a private embedded broker, and
	// the rows that start a mesh of their own are left out.
	URLs []string
}

// Check refuses, in the words of `cotal bench`'s flags, options that
// cannot run: a budget under a second, a path no row has.
func (o Options) Check() error {
	if o.Budget < time.Second {
		return fmt.Errorf("--time %s is too short: give at least 1s", o.Budget)
	}
	for _, p := range o.Only {
		if !slices.Contains(Paths(), p) {
			return fmt.Errorf("no path is named %q: the paths are %s", p, strings.Join(Paths(), "; "))
		}
	}
	if o.URLs != nil {
		if err := broker.CheckURLs(o.URLs); err != nil {
			return fmt.Errorf("--url: %w", err)
		}
		for _, p := range all() {
			if p.notOnURL != "" && slices.Contains(o.Only, p.name) {
				return fmt.Errorf("path %q does not run with --url: it %s", p.name, p.notOnURL)
			}
		}
	}
	return nil
}

// Stat is one side of a row: its sample count and percentiles.
type Stat struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"` // in Unit
	P99 float64 `json:"p99"`
}

// Result is one row of the table.
type Result struct {
	Path  string  `json:"path"`
	Unit  string  `json:"unit"` // "µs", or "MB/s" for a throughput
	Cotal Stat    `json:"cotal"`
	Floor Stat    `json:"floor"`
	Base  string  `json:"floor_path"` // what the floor is
	Ratio float64 `json:"ratio"`      // cotal p50 over floor p50 (floor over cotal for a throughput)
	Goal  string  `json:"goal"`
	Met   bool    `json:"met"`
	Error string  `json:"error,omitempty"`
}

// path is one row to measure: run measures both sides in budget.
type path struct {
	name, base, goal string
	unit             string
	// limit is the ratio the goal allows; absolute, when set, is instead
	// a bound on cotal's p50; higher marks a throughput (bigger is better,
	// the ratio is floor over cotal... inverted so that lower is better).
	limit    float64
	absolute time.Duration
	higher   bool
	// notOnURL, when set, says why the row does not run on --url servers.
	notOnURL string
	run      func(ctx context.Context, e *env, budget time.Duration) (cotal, floor Stat, err error)
}

// Paths names every path Run can measure, in table order.
func Paths() []string {
	var names []string
	for _, p := range all() {
		names = append(names, p.name)
	}
	return names
}

// Run measures the paths o asks for on a private mesh it starts in a
// temporary store and removes again. A path that fails is a row with its
// error; Run's own error is a mesh that would not start.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Budget <= 0 {
		o.Budget = time.Minute
	}
	var todo []path
	for _, p := range all() {
		if (len(o.Only) == 0 || slices.Contains(o.Only, p.name)) && (p.notOnURL == "" || o.URLs == nil) {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return nil, fmt.Errorf("no path matches %v: the paths are %v", o.Only, Paths())
	}
	e, err := startEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	share := o.Budget / time.Duration(len(todo))
	var out []Result
	for i, p := range todo {
		if o.Progress != nil {
			o.Progress(i, len(todo), p.name)
		}
		r := Result{Path: p.name, Unit: p.unit, Base: p.base, Goal: p.goal}
		if r.Unit == "" {
			r.Unit = "µs"
		}
		e.drain(ctx)
		c, f, err := p.run(ctx, e, share)
		e.cleanup()
		r.Cotal, r.Floor = c, f
		if err != nil {
			r.Error = err.Error()
		} else {
			r.Ratio, r.Met = judge(p, c, f)
		}
		out = append(out, r)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

// judge is a row's ratio and whether it meets its goal.
func judge(p path, c, f Stat) (float64, bool) {
	ratio := 0.0
	switch {
	case p.higher && c.P50 > 0:
		ratio = f.P50 / c.P50
	case !p.higher && f.P50 > 0:
		ratio = c.P50 / f.P50
	}
	ratio = math.Round(ratio*100) / 100
	if p.absolute > 0 {
		return ratio, c.P50 > 0 && c.P50 <= float64(p.absolute.Microseconds())
	}
	return ratio, ratio > 0 && ratio <= p.limit
}

// stat is the percentiles of l in microseconds.
func stat(l []time.Duration) Stat {
	if len(l) == 0 {
		return Stat{}
	}
	slices.Sort(l)
	pct := func(p float64) float64 {
		return float64(l[int(float64(len(l)-1)*p)].Nanoseconds()) / 1e3
	}
	return Stat{N: len(l), P50: round(pct(0.50)), P99: round(pct(0.99))}
}

// Percentiles is the Stat of durations (in microseconds), for the package
// benchmarks to report alike.
func Percentiles(l []time.Duration) Stat { return stat(append([]time.Duration(nil), l...)) }

func round(v float64) float64 { return math.Round(v*10) / 10 }

// pair measures cotal and floor alternately, one sample of each in turn,
// until budget is spent (at least min pairs, at most max), each after a
// first run that is not counted (connections, caches and the scheduler
// warm up on it). Alternating puts both sides under the same load: on a
// shared machine, two halves measured one after the other can differ by
// more than the ratio they are meant to show.
func pair(ctx context.Context, budget time.Duration, min, max int, cotal, floor func(i int) (time.Duration, error)) (Stat, Stat, error) {
	if _, err := cotal(-1); err != nil {
		return Stat{}, Stat{}, fmt.Errorf("cotal: %w", err)
	}
	if _, err := floor(-1); err != nil {
		return Stat{}, Stat{}, fmt.Errorf("floor: %w", err)
	}
	var cl, fl []time.Duration
	end := time.Now().Add(budget)
	for i := 0; i < max && (i < min || time.Now().Before(end)); i++ {
		if err := ctx.Err(); err != nil {
			return stat(cl), stat(fl), err
		}
		d, err := cotal(i)
		if err != nil {
			return stat(cl), stat(fl), fmt.Errorf("cotal: %w", err)
		}
		cl = append(cl, d)
		if d, err = floor(i); err != nil {
			return stat(cl), stat(fl), fmt.Errorf("floor: %w", err)
		}
		fl = append(fl, d)
	}
	return stat(cl), stat(fl), nil
}

// within bounds a wait inside a measure.
const within = 10 * time.Second

// waitFor waits for ch or fails after within.
func waitFor[T any](ch <-chan T, what string) (T, error) {
	select {
	case v := <-ch:
		return v, nil
	case <-time.After(within):
		var zero T
		return zero, fmt.Errorf("%s did not come within %s", what, within)
	}
}
