package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/manifest/apply"
)

// loadManifest reads the manifest named (or, with "", the cotal.yaml of
// this folder or the nearest above) and makes its space the command's.
func loadManifest(g *globals, file string) (*manifest.Manifest, error) {
	cwd, _ := os.Getwd()
	file, err := manifest.Locate(file, cwd)
	if err != nil {
		return nil, usage(err)
	}
	m, err := manifest.Load(file)
	var me *manifest.Error
	switch {
	case errors.As(err, &me):
		return nil, usagef("%v\nnothing was started or changed", err)
	case err != nil:
		return nil, usagef("reading the manifest: %v", err)
	}
	if g.space != "" && g.space != m.Space {
		return nil, usagef("--space (or COTAL_SPACE) says %q, and %s describes space %q: leave --space out or change the file", g.space, m.Path, m.Space)
	}
	g.space = m.Space
	return m, nil
}

// manifestMesh connects to the running mesh of p as the operator.
func manifestMesh(g *globals, p config.Paths) (apply.Mesh, func(), error) {
	cl, nc, err := g.managers()
	if err != nil {
		return apply.Mesh{}, nil, err
	}
	ms := apply.Mesh{Paths: p, NC: nc, Seats: cl}
	if s, err := host.Probe(p); err == nil {
		if rec, err := s.Serving(); err == nil {
			ms.Open = rec.Mode == config.ModeOpen
		}
	}
	return ms, nc.Close, nil
}

// planFor is what up -f would do now.
func planFor(ctx context.Context, g *globals, m *manifest.Manifest) (*manifest.Plan, error) {
	_, p, _, err := g.paths()
	if err != nil {
		return nil, err
	}
	if s, err := host.Probe(p); err != nil || !s.Running {
		plan, _, err := apply.Plan(ctx, p, nil, m)
		return plan, err
	}
	ms, done, err := manifestMesh(g, p)
	if err != nil {
		return nil, err
	}
	defer done()
	plan, _, err := apply.Plan(ctx, p, &ms, m)
	return plan, err
}

func newPlanCmd(g *globals) *cobra.Command {
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Print what `cotal up -f` would do with a manifest, touching nothing",
		Long: `Read the manifest (-f FILE, or the cotal.yaml of this folder or the nearest
above), compare it with what the last "cotal up -f" applied and with what runs,
and print each step up -f would take: start the mesh, write the registry,
mint, spawn, re-mint, restart (only with --apply) or remove (only with
--prune). Nothing is started, written or stopped. A bad file is refused with
its line and column (exit 2).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := loadManifest(g, file)
			if err != nil {
				return err
			}
			ctx, cancel := ctxTimeout()
			defer cancel()
			plan, err := planFor(ctx, g, m)
			if err != nil {
				return err
			}
			if asJSON {
				return g.resultJSON(plan)
			}
			fmt.Fprint(g.stdout, plan.Text())
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the manifest (default: cotal.yaml here or in the nearest folder above)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
	return cmd
}
