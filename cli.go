package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/seat/client"
)

// Exit codes, documented in `cotal --help`.
const (
	exitOK    = 0
	exitFail  = 1 // the command ran and failed (or, for status, the mesh is down)
	exitUsage = 2 // bad input: unknown flag, invalid name, bad ACL entry
)

// usagef and usage mark bad input, which exits 2.
func usagef(format string, a ...any) error { return cliargs.Usagef(format, a...) }
func usage(err error) error                { return cliargs.UsageError{Err: err} }

// exitError carries an exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// globals are the flags every command shares.
type globals struct {
	space    string
	storeDir string
	creds    string
	server   string
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	// resolved is the space this process resolved first. It keeps it:
	// a dashboard or join that serves the folder's one mesh must not be
	// moved off it when another mesh starts for the folder. mu guards it:
	// the dashboard dials from more than one goroutine.
	mu       sync.Mutex
	resolved *config.Resolution
}

func run(args []string, stdout, stderr io.Writer) int {
	return execute(&globals{stdin: os.Stdin, stdout: stdout, stderr: stderr}, args)
}

// execute runs the command line args with g's streams and returns the
// exit code.
func execute(g *globals, args []string) int {
	stdout, stderr := g.stdout, g.stderr
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintln(stderr, "cotal:", err)
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
	pf.StringVar(&g.server, "server", os.Getenv("COTAL_URL"), "mesh URL to connect to (env COTAL_URL; default: from the space's broker.json)")
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
		newPlanCmd(g), newInitCmd(g), newTopologyCmd(g), newBrokerCmd(g), newBenchCmd(g))
	root.AddCommand(worktreeCommands(g)...)
	cliargs.Forgive(root)
	addCompletions(root, g)
	return root
}

// paths resolves the space and its paths. When nothing names the space,
// the one mesh running for this folder is it; several are bad input. The
// first resolution holds for the rest of the process.
func (g *globals) paths() (string, config.Paths, config.Resolution, error) {
	data, err := config.DataDir()
	if err != nil {
		return "", config.Paths{}, config.Resolution{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.resolved == nil {
		cwd, _ := os.Getwd()
		res, err := config.ResolveSpace(config.SpaceQuery{
			Flag: g.space, Creds: g.creds, Cwd: cwd, Data: data,
			Running: func() ([]config.LiveMesh, error) { return host.RunningMeshes(data) },
		})
		if err != nil {
			return "", config.Paths{}, res, usage(err)
		}
		g.resolved = &res
	}
	res := *g.resolved
	p, err := config.SpacePaths(data, res.Space, g.storeDir)
	return data, p, res, err
}

// resolveTarget finds the mesh a client command talks to (host.Resolve):
// --server and --creds win; else the process holding the space's store
// lock, as the local operator.
func (g *globals) resolveTarget() (host.Target, error) {
	data, p, res, err := g.paths()
	if err != nil {
		return host.Target{}, err
	}
	t, err := host.Resolve(p, g.server, g.creds)
	if errors.Is(err, host.ErrNotRunning) {
		return t, host.NotRunning(data, p, res)
	}
	return t, err
}

// ctxTimeout is the default deadline of a one-shot command's broker calls.
func ctxTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}

// printJSON prints v as indented JSON: what every --json prints.
func printJSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintln(w, string(b))
}

// resultJSON prints a command's result for --json and ends the command.
func (g *globals) resultJSON(v any) error {
	printJSON(g.stdout, v)
	return nil
}

// orDefault is s, or otherwise when s is empty.
func orDefault(s, otherwise string) string { return clirender.OrDefault(s, otherwise) }

// ageMs is the age of a manager's time t read against its clock now.
func ageMs(nowMs, t int64) string { return clirender.AgeMs(nowMs, t) }
