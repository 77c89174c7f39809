package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/launch"
	"github.com/cotal-go/cotal/tui"
)

// addDashboardFlags registers the flags only bare `cotal` has.
func addDashboardFlags(fs *pflag.FlagSet) {
	fs.Bool("no-bell", false, "do not ring the terminal bell when a seat starts needing you")
	fs.Bool("no-notify", false, "raise no desktop notification when a seat starts needing you (also "+tui.NotifyEnv+"=off)")
}

// runDashboardCmd is bare `cotal`: the dashboard, hosting the space's mesh
// or as a client of the one already running (launch.Dashboard). Of up's
// flags it takes those that say how the mesh runs here.
func runDashboardCmd(cmd *cobra.Command, g *globals) error {
	fs := cmd.Flags()
	if fs.Changed("file") || fs.Changed("apply") || fs.Changed("prune") {
		return cliargs.Usagef("-f, --apply and --prune apply a manifest: run `cotal up -f FILE`, then `cotal` for the dashboard")
	}
	if fs.Changed("host") || fs.Changed("tls-cert") || fs.Changed("tls-key") {
		return cliargs.Usagef("--host starts a mesh other machines reach: run `cotal up --host ADDR --detach`, then `cotal` for the dashboard")
	}
	o := launch.DashboardOptions{Up: launch.UpOptions{Sync: config.SyncAlways}}
	o.Up.Detach, _ = fs.GetBool("detach")
	o.Up.Open, _ = fs.GetBool("open")
	o.Up.Verbose, _ = fs.GetBool("verbose")
	if s, err := fs.GetString("sync"); err == nil {
		o.Up.Sync = s
	}
	o.Up.Timeout, _ = fs.GetDuration("timeout")
	o.Up.MaxSessions, _ = fs.GetInt("max-sessions")
	o.NoBell, _ = fs.GetBool("no-bell")
	o.NoNotify, _ = fs.GetBool("no-notify")
	return reported(launch.Dashboard(cmd.Context(), g.launcher(), o))
}
