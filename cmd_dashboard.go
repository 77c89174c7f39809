package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/launch"
	"github.com/cotal-go/cotal/tui"
)

// addDashboardFlags registers the flags only bare `cotal` has.
func addDashboardFlags(fs *pflag.FlagSet) {
	fs.Bool("no-bell", false, "do not ring the terminal bell when a seat starts needing you")
	fs.Bool("no-notify", false, "raise no desktop notification when a seat starts needing you (also "+tui.NotifyEnv+"=off)")
}

// runDashboardCmd is bare `cotal`: the dashboard, hosting the space's mesh
// or as a client of the one already running. With --detach, or when
// stdin or stdout is not a terminal, it is `cotal up` instead.
func runDashboardCmd(cmd *cobra.Command, g *globals) error {
	fs := cmd.Flags()
	if fs.Changed("file") || fs.Changed("apply") || fs.Changed("prune") {
		return usagef("-f, --apply and --prune apply a manifest: run `cotal up -f FILE`, then `cotal` for the dashboard")
	}
	f := &launch.UpOptions{Sync: config.SyncAlways}
	f.Detach, _ = fs.GetBool("detach")
	f.Open, _ = fs.GetBool("open")
	f.Verbose, _ = fs.GetBool("verbose")
	if s, err := fs.GetString("sync"); err == nil {
		f.Sync = s
	}
	f.Timeout, _ = fs.GetDuration("timeout")
	f.MaxSessions, _ = fs.GetInt("max-sessions")
	noBell, _ := fs.GetBool("no-bell")
	noNotify, _ := fs.GetBool("no-notify")
	if f.Detach || !launch.Terminal(g.stdout) {
		return runUp(cmd.Context(), g, f)
	}
	s, err := launch.NewScreen(noBell, noNotify)
	if err != nil {
		return err
	}
	s.Diff, s.Review = diffText, dashboardReview(g)
	if err := f.Check(); err != nil {
		return err
	}
	c, _, err := g.callerFor("")
	if err != nil {
		return err
	}
	return launch.Dashboard(cmd.Context(), c, *f, s)
}

// personaDir is the project whose personas the spawn picker lists.
func personaDir() string { return launch.PersonaDir() }
