// Command cotal runs a Cotal mesh for AI coding agents on one workstation:
// an embedded NATS broker with JetStream, per-agent credentials, and the
// CLI that talks to it.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/internal/quit"
	"github.com/cotal-go/cotal/launch"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/sandbox"
)

func main() {
	// Started as a seat's launcher, this process confines itself and
	// becomes the seat's agent; nothing below runs.
	sandbox.Main()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// untilQuit is where a command that runs until stopped catches quit
// signals (internal/quit); those that host a mesh catch them in launch.
var untilQuit = quit.Until

// hostQuit is the quit rule of a command hosting h (launch.HostQuit).
func hostQuit(g *globals, h *host.Host) func(os.Signal) bool { return launch.HostQuit(g.stderr, h) }

// Exit codes, documented in `cotal --help`.
const (
	exitOK    = 0
	exitFail  = 1 // the command ran and failed (or, for status, the mesh is down)
	exitUsage = 2 // bad input: unknown flag, invalid name, bad ACL entry
)

func run(args []string, stdout, stderr io.Writer) int {
	return execute(&globals{stdin: os.Stdin, stdout: stdout, stderr: stderr}, args)
}

// execute runs the command line args with g's streams and returns the
// exit code.
func execute(g *globals, args []string) int {
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	err := root.Execute()
	var ee exitError
	var refused *clirun.RefusedError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &refused):
		clirender.Refusal(g.stderr, refused.Err)
		return exitFail
	}
	fmt.Fprintln(g.stderr, "cotal:", err)
	if cliargs.IsUsage(err) {
		return exitUsage
	}
	return exitFail
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "cotal",
		Short: "A mesh for AI coding agents on one workstation",
		Long: `cotal runs a Cotal mesh: an embedded NATS broker with JetStream where AI
coding agents talk as peers over channels, direct messages and roles, with
per-agent credentials the broker enforces.

Bare "cotal" opens the dashboard: it hosts the space's mesh in this process
(quitting stops it; closing its terminal while seats run leaves the mesh
running without a dashboard) or, when "cotal up --detach" already runs it,
is a client (quitting leaves it running). Without a terminal it is "cotal
up" in the foreground.

Exit codes: 0 success, 1 failure (status: the mesh is down), 2 bad input.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.space, "space", os.Getenv("COTAL_SPACE"), "the `name` of the space to act on (env COTAL_SPACE; default: the one the --creds credential names, else the one set with cotal use, else the one mesh running for this folder, else the nearest project .cotal folder's name, else default)")
	pf.StringVar(&g.storeDir, "store-dir", "", "the space's store directory (default: remembered, else under the data dir)")
	pf.StringVar(&g.creds, "creds", os.Getenv("COTAL_CREDS"), "act as the identity in this creds `file`, or in the one `cotal mint <name>` kept under the store for this name (env COTAL_CREDS)")
	pf.StringVar(&g.server, "server", os.Getenv("COTAL_URL"), "mesh URL to connect to (env COTAL_URL; default: from the space's broker.json); tls://host:port for a mesh started with up --host")
	pf.StringVar(&g.tls.Pin, "tls-pin", os.Getenv("COTAL_TLS_PIN"), "the `SHA256` fingerprint of the certificate the mesh serves, as `cotal up --host` prints it: a server showing another is refused before the credential is sent (env COTAL_TLS_PIN; default: the one broker.json records)")
	pf.StringVar(&g.tls.CA, "tls-ca", os.Getenv("COTAL_TLS_CA"), "verify the mesh's TLS certificate against the CA certificates in this PEM `file` instead of a pin; with up --host: the CA that signed --tls-cert (env COTAL_TLS_CA)")
	root.PersistentPreRunE = checkCreds(g)

	up := newUpCmd(g)
	root.RunE = func(cmd *cobra.Command, _ []string) error { return runDashboardCmd(cmd, g) }
	root.Flags().AddFlagSet(up.Flags())
	addDashboardFlags(root.Flags())
	root.AddCommand(up, newDownCmd(g), newStatusCmd(g), newMintCmd(g), newMeshesCmd(g), newUseCmd(g), newVersionCmd(g),
		newSendCmd(g), newInboxCmd(g), newRosterCmd(g), newJoinCmd(g), newChannelsCmd(g), newHistoryCmd(g),
		newDescribeCmd(g), newInvokeCmd(g), newDeregisterInstanceCmd(g),
		newSpawnCmd(g), newPsCmd(g), newScreenCmd(g), newStopCmd(g), newInputCmd(g), newAttachCmd(g), newSuperviseCmd(g),
		newSetStatusCmd(g), newLeaveCmd(g), newSetupCmd(g), newMCPCmd(g), newDeliveriesCmd(g),
		newHookCmd(g), newAnswerCmd(g, client.AnswerAllow), newAnswerCmd(g, client.AnswerDeny),
		newPlanCmd(g), newInitCmd(g), newTopologyCmd(g), newBrokerCmd(g), newBenchCmd(g), newLeafCredsCmd(g))
	root.AddCommand(worktreeCommands(g)...)
	cliargs.Forgive(root)
	addCompletions(root, g)
	return root
}

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func newVersionCmd(g *globals) *cobra.Command {
	var asJSON bool
	return withJSON(&cobra.Command{
		Use:   "version",
		Short: "Print cotal's version and its broker's",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { clirender.Version(g.stdout, clirun.Version(version), asJSON) },
	}, &asJSON, "print as JSON")
}
