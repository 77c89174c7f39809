package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/term"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/pty"
)

// managers is a client of the space's managers as this process's caller;
// closing nc ends it. An agent's credential gets an agent's client: it
// sends its census and finds seats on the roster, since it may not read
// the registry the operator's census freezes.
func (g *globals) managers() (*client.Client, *nats.Conn, error) {
	c, nc, err := g.epClient()
	if err != nil {
		return nil, nil, err
	}
	if !g.actsAsAgent() {
		return client.New(c), nc, nil
	}
	roster := func(ctx context.Context) ([]presence.Peer, error) {
		e, err := g.endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}})
		if err != nil {
			return nil, err
		}
		defer e.Close()
		peers, _, err := e.Roster(ctx)
		return peers, err
	}
	return client.New(c, client.AsAgent(roster)), nc, nil
}

// actsAsAgent reports whether --creds names an agent's (or an observer's)
// credential rather than the operator's.
func (g *globals) actsAsAgent() bool {
	if g.creds == "" {
		return false
	}
	info, err := loadCreds(g.creds, "creds")
	return err == nil && (info.Profile == string(broker.ProfileAgent) || info.Profile == string(broker.ProfileObserver))
}

func ageMs(nowMs, t int64) string {
	if t == 0 {
		return "-"
	}
	return render.Age(time.UnixMilli(nowMs), time.UnixMilli(t))
}

func newPsCmd(g *globals) *cobra.Command {
	var (
		on           string
		wide, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "ps",
		Short: "List the seats of every manager, process state and mesh state side by side",
		Long: `Ask every registered manager for its seats at once. Each row shows the
process state and the mesh state with their ages; they can disagree (a process
running but off the mesh, or gone). Managers that do not answer are named, and
the command then exits 1: the census is incomplete.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cl, nc, err := g.managers()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := ctxTimeout()
			defer cancel()
			cs, err := cl.Census(ctx, on)
			if err != nil {
				return epFailure(g, err)
			}
			if asJSON {
				b, _ := json.MarshalIndent(cs, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
			} else {
				printCensus(g, cs, wide)
			}
			if cs.Incomplete() {
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "ask only this manager instance")
	cmd.Flags().BoolVar(&wide, "wide", false, "also show ids, lifecycle uids and goals")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func printCensus(g *globals, cs *client.Census, wide bool) {
	if len(cs.Rows) == 0 {
		fmt.Fprintf(g.stdout, "no seats (%d manager(s) answered)\n", len(cs.Managers))
	} else {
		tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
		head := "NAME\tPROCESS\tFOR\tMESH\tFOR\tPID\tROLE\tPERSONA\tTYPED-IN\tOUTPUT\tSANDBOX\tMANAGER"
		if wide {
			head += "\tID\tUID\tGOAL\tSESSION"
		}
		fmt.Fprintln(tw, head)
		for _, r := range cs.Rows {
			since := r.StartedMs
			if r.ExitedMs != 0 {
				since = r.ExitedMs
			}
			process := r.Process
			if r.Running() && r.SuspendedMs != 0 {
				process = client.ProcessSuspended
			}
			mesh := r.Mesh
			if r.Running() && r.Mesh == "offline" {
				mesh += " (" + r.State + ")"
			}
			line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s", r.Name, process, ageMs(r.ManagerNowMs, since),
				mesh, ageMs(r.ManagerNowMs, r.MeshSinceMs), r.PID, dash(r.Role), r.Persona, typedIn(r.Injects), ageMs(r.ManagerNowMs, r.LastOutputMs),
				sandboxColumn(r.Sandbox), r.Manager)
			if wide {
				line += fmt.Sprintf("\t%s\t%s\t%s\t%s", r.ID, r.LifecycleUID, r.GoalID, dash(r.Session))
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
		for _, r := range cs.Rows {
			if strings.HasPrefix(r.Sandbox, "unsandboxed") && r.Running() {
				fmt.Fprintf(g.stdout, "%s is %s\n", r.Name, r.Sandbox)
			}
		}
		for _, r := range cs.Rows {
			if r.Running() && r.SuspendedMs != 0 {
				fmt.Fprintf(g.stdout, "%s is stopped by a signal (SIGSTOP or ^Z), for %s: it runs nothing until continued (kill -CONT %d)\n",
					r.Name, ageMs(r.ManagerNowMs, r.SuspendedMs), r.PID)
			}
		}
		for _, r := range cs.Rows {
			if line := custodyLine(r); line != "" {
				fmt.Fprintln(g.stdout, line)
			}
		}
		for _, r := range cs.Rows {
			if !r.Injects && r.Running() {
				fmt.Fprintf(g.stdout, "%s gets no messages typed in: it reads them with `cotal inbox` (a command seat's persona turns typing on with inject: true)\n", r.Name)
			}
		}
		for _, r := range cs.Rows {
			if line := askingLine(r); line != "" {
				fmt.Fprintln(g.stdout, line)
			}
		}
		for _, r := range cs.Rows {
			if line := waitingLine(r); line != "" {
				fmt.Fprintln(g.stdout, line)
			}
		}
		for _, r := range cs.Rows {
			for _, a := range r.Sessions {
				fmt.Fprintf(g.stdout, "%s: attached by %s for %s (session %s, %s out, %s dropped)\n", r.Name, a.Holder,
					ageMs(r.ManagerNowMs, a.SinceMs), a.ID, humanBytes(a.BytesOut), humanBytes(a.Dropped))
			}
		}
	}
	for _, m := range cs.Missing {
		fmt.Fprintf(g.stderr, "manager %s did not answer (%s): census incomplete\n", m.InstanceID, dashS(string(m.Liveness)))
	}
	for _, m := range cs.Failed {
		fmt.Fprintf(g.stderr, "manager %s answered with an error (%s): census incomplete\n", m.InstanceID, m.Error)
	}
}

// custodyLine says what became of a seat across a restart of its manager:
// taken back from its keeper, lost, ended while no manager held it, or
// resumed from a preserved inventory; "" for none of these.
func custodyLine(r client.CensusRow) string {
	switch {
	case r.LostMs != 0:
		return fmt.Sprintf("%s: lost %s ago: %s", r.Name, ageMs(r.ManagerNowMs, r.LostMs), r.Lost)
	case r.EndedAway:
		return fmt.Sprintf("%s: ended while no manager held it (%s, %s ago)", r.Name, r.Process, ageMs(r.ManagerNowMs, r.ExitedMs))
	case r.ReattachedMs != 0 && r.Running():
		line := fmt.Sprintf("%s: reattached %s ago, taken back from its keeper", r.Name, ageMs(r.ManagerNowMs, r.ReattachedMs))
		if r.DetachedKept > 0 || r.DetachedDropped > 0 {
			line += fmt.Sprintf("; while no manager held it, it wrote %s: the last %s kept, %s dropped",
				humanBytes(r.DetachedKept+r.DetachedDropped), humanBytes(r.DetachedKept), humanBytes(r.DetachedDropped))
		}
		return line
	case r.ResumedMs != 0 && r.Running():
		if r.ResumedFrom == "" {
			return fmt.Sprintf("%s: resumed %s ago (its harness keeps no session: it started afresh under the same identity)", r.Name, ageMs(r.ManagerNowMs, r.ResumedMs))
		}
		return fmt.Sprintf("%s: resumed %s ago from session %s", r.Name, ageMs(r.ManagerNowMs, r.ResumedMs), r.ResumedFrom)
	}
	return ""
}

// howEnded says how a stopped seat's process ended, from its ps process
// column.
func howEnded(process string, graceful bool) string {
	switch {
	case process == "killed SIGTERM":
		return "it ended on SIGTERM"
	case process == "killed SIGHUP":
		return "it ended on SIGHUP (it ignores SIGTERM, as an interactive shell does, so it was hung up instead)"
	case process == "killed SIGKILL" && graceful:
		return "it did not end within 3 s of its stop signal and was killed (SIGKILL)"
	case process == "killed SIGKILL":
		return "killed at once (SIGKILL)"
	case strings.HasPrefix(process, "exited "):
		return "it exited with status " + strings.TrimPrefix(process, "exited ")
	}
	return process
}

// askingLine says what a running seat's harness waits on a person for,
// how long, and how to answer: "cc: approve Bash(touch x) 40s (...)";
// "" when it waits on nothing.
func askingLine(r client.CensusRow) string {
	a := r.Agent
	if a == nil || a.State != client.AgentWaiting || !r.Running() {
		return ""
	}
	how := fmt.Sprintf("attach to answer: cotal attach %s", r.Name)
	if a.Answerable {
		how = fmt.Sprintf("cotal approve %s / cotal deny %s", r.Name, r.Name)
	}
	asks := wire.CleanLabel(a.Asks)
	if asks == "" {
		asks = "waiting for input"
	}
	return fmt.Sprintf("%s: %s %s (waiting on you; %s)", r.Name, asks, ageMs(r.ManagerNowMs, a.SinceMs), how)
}

// waitingLine says what waits at a seat's connector and why, "" when
// nothing does.
func waitingLine(r client.CensusRow) string {
	switch {
	case r.Held != "" && r.Waiting > 0:
		return fmt.Sprintf("%s: held: %s; %s waiting, the oldest for %s", r.Name, r.Held, plural(r.Waiting, "message"), ageMs(r.ManagerNowMs, r.OldestWaitingMs))
	case r.Held != "":
		return fmt.Sprintf("%s: held: %s", r.Name, r.Held)
	case r.Waiting == 0:
		return ""
	case r.PullOnly == r.Waiting:
		return fmt.Sprintf("%s: %s left for its inbox read", r.Name, plural(r.Waiting, "message"))
	case !r.Injects:
		return fmt.Sprintf("%s: %s waiting; it reads its inbox itself", r.Name, plural(r.Waiting, "message"))
	}
	return fmt.Sprintf("%s: %s waiting, the oldest for %s", r.Name, plural(r.Waiting, "message"), ageMs(r.ManagerNowMs, r.OldestWaitingMs))
}

// typedIn is the TYPED-IN column: whether messages are typed into the
// seat's terminal.
func typedIn(injects bool) string {
	if injects {
		return "yes"
	}
	return "no"
}

// plural is n and the noun, in agreement.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// sandboxColumn is a seat's sandbox in one word; the reason of an
// unsandboxed seat is printed under the table.
func sandboxColumn(s string) string {
	word, _, _ := strings.Cut(s, ":")
	return dash(word)
}

func dashS(s string) string {
	if s == "" {
		return "no answer"
	}
	return s
}

func newSpawnCmd(g *globals) *cobra.Command {
	var (
		a         client.SpawnArgs
		on        string
		detach    bool
		asJSON    bool
		followFor time.Duration
	)
	cmd := &cobra.Command{
		Use:   "spawn <persona>",
		Short: "Start a seat from a persona (.cotal/agents/<persona>.md) and follow it until it is up",
		Long: `Ask a manager to start a seat. The manager accepts at once with the seat's
name and identity; the spawn then ends in exactly one outcome: succeeded (the
seat is up), failed (it exited first, with its exit status and last screen
lines) or uncertain (neither within the readiness bound: inspect the seat with
"cotal ps" and "cotal screen"; do not spawn it again). --detach returns after
the acceptance.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			a.Persona = args[0]
			if a.Name != "" && !wire.ValidToken(a.Name) {
				return usagef("--name %q: a seat's name is one token of A-Z a-z 0-9 _ (at most %d characters)", a.Name, wire.MaxTokenLength)
			}
			cl, nc, err := g.managers()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := ctxTimeout()
			defer cancel()
			sp, err := cl.Spawn(ctx, a, on)
			if err != nil {
				return spawnRefused(a.Persona, err)
			}
			if !asJSON {
				fmt.Fprintf(g.stdout, "accepted: seat %s (%s.%s, lifecycle %s) on manager %s; goal %s\n", sp.Name, sp.Owner, sp.Actor, sp.UID, sp.Manager, sp.GoalID)
			}
			if detach {
				if asJSON {
					fmt.Fprintln(g.stdout, string(sp.Reply))
				}
				return nil
			}
			wait := sp.Deadline() + followFor
			fctx, fcancel := context.WithTimeout(context.Background(), wait)
			defer fcancel()
			var w client.Watch
			if !asJSON {
				w.Step = func(s client.Step) { fmt.Fprintf(g.stdout, "%s: %s\n", sp.Name, describeStep(s)) }
				w.Pending = func() {
					fmt.Fprintf(g.stderr, "waiting for %s to come up (at most %s)...\n", sp.Name, sp.Deadline())
				}
			}
			res, err := cl.AwaitSpawn(fctx, sp, w)
			if err != nil {
				return fmt.Errorf("spawn of %s: no outcome within %s; see `cotal ps` and `cotal screen %s`", sp.Name, wait, sp.Name)
			}
			return printSpawnResult(g, sp.SpawnAccepted, res, asJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&a.Name, "name", "", "the seat's name (refused if a live seat has it); default the persona's, numbered")
	fl.StringVar(&a.Cwd, "cwd", "", "working directory of the seat")
	fl.StringVar(&a.Role, "role", "", "role the seat serves (default the persona's)")
	fl.StringVar(&a.Prompt, "prompt", "", "first prompt for an agent harness")
	fl.StringVar(&on, "on", "", "spawn on this manager instance")
	fl.BoolVarP(&detach, "detach", "d", false, "return once the manager accepted")
	fl.BoolVar(&asJSON, "json", false, "print as JSON")
	fl.DurationVar(&followFor, "follow-margin", 10*time.Second, "how long past the readiness bound to wait for the outcome")
	return cmd
}

// spawnRefused is a manager's refusal of a spawn as a sentence: bad input
// (no such persona, a file that does not load, a name that is not a
// token or is taken) exits 2, anything else 1; either way nothing was
// started.
func spawnRefused(persona string, err error) error {
	e := ep.AsError(err)
	if e == nil {
		return err
	}
	msg := fmt.Errorf("cannot spawn %s: %s; nothing was started", persona, strings.TrimSuffix(e.Message, "."))
	switch e.Code {
	case ep.CodeBadRequest, ep.CodeNotFound, ep.CodeFailedPrecondition, ep.CodeAlreadyExists:
		return usageError{msg}
	}
	if e.EffectiveOutcome() == ep.Unknown {
		return fmt.Errorf("cannot tell whether %s was spawned: %s; see `cotal ps`", persona, e.Message)
	}
	return msg
}

func printSpawnResult(g *globals, acc client.SpawnAccepted, res ep.GoalResult, asJSON bool) error {
	if asJSON {
		b, _ := json.MarshalIndent(map[string]any{"accepted": acc, "result": res}, "", "  ")
		fmt.Fprintln(g.stdout, string(b))
	}
	switch res.State {
	case ep.GoalSucceeded:
		if !asJSON {
			fmt.Fprintf(g.stdout, "ready: %s is up and on the mesh\n", acc.Name)
		}
		return nil
	case ep.GoalUncertain:
		if !asJSON {
			why := fmt.Sprintf("%s did not show it was up within the bound", acc.Name)
			var d struct {
				Reason string `json:"reason"`
			}
			if json.Unmarshal(res.Data, &d) == nil && d.Reason != "" {
				why = wire.CleanLabel(d.Reason)
			}
			fmt.Fprintf(g.stdout, "uncertain: %s; it is kept running: inspect it with `cotal screen %s` and `cotal ps` rather than spawning it again\n", why, acc.Name)
		}
		return exitError{exitFail}
	default:
		if !asJSON {
			msg := ""
			if res.Error != nil {
				msg = res.Error.Message
			}
			fmt.Fprintf(g.stdout, "%s: %s\n", res.State, msg)
		}
		return exitError{exitFail}
	}
}

// onSeat locates a seat over the managers (or only on) and makes one call
// on it; a name no manager has is a usage error.
func onSeat(g *globals, name, on string, call func(context.Context, *client.Client, client.Seat) error) error {
	cl, nc, err := g.managers()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	row, err := cl.Locate(ctx, name, on)
	var none *client.NoSeatError
	if errors.As(err, &none) {
		return usageError{err}
	}
	if err != nil {
		return epFailure(g, err)
	}
	if err := call(ctx, cl, row.Seat()); err != nil {
		return epFailure(g, err)
	}
	return nil
}

func newScreenCmd(g *globals) *cobra.Command {
	var on string
	var asJSON, follow bool
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "screen <name>",
		Short: "Print a seat's current screen (--follow: each time it changes, until Ctrl-C)",
		Long: `Print a seat's current screen as text. --follow keeps asking, every
--interval, and prints the screen again each time it changed, until Ctrl-C or
the seat exits (its last screen is printed). On a terminal each screen
replaces the last; otherwise each is preceded by a line "--- <name> <time> ---".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if follow {
				if every < minFollowEvery {
					return usagef("--interval %s: at least %s", every, minFollowEvery)
				}
				return followScreen(cmd.Context(), g, args[0], on, every, asJSON)
			}
			return onSeat(g, args[0], on, func(ctx context.Context, cl *client.Client, s client.Seat) error {
				r, err := cl.Screen(ctx, s)
				if err != nil {
					return err
				}
				printScreen(g, r, asJSON, false)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON (with --follow, one object per line)")
	cmd.Flags().BoolVar(&follow, "follow", false, "print the screen each time it changes, until Ctrl-C")
	cmd.Flags().DurationVar(&every, "interval", 250*time.Millisecond, "with --follow: how often to ask for the screen")
	return cmd
}

// minFollowEvery keeps --follow from flooding the manager.
const minFollowEvery = 50 * time.Millisecond

func printScreen(g *globals, r client.ScreenReply, asJSON, oneLine bool) {
	switch {
	case asJSON && oneLine:
		b, _ := json.Marshal(r)
		fmt.Fprintln(g.stdout, string(b))
	case asJSON:
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintln(g.stdout, string(b))
	default:
		fmt.Fprintln(g.stdout, r.Screen)
	}
	if !r.Running && !asJSON {
		fmt.Fprintf(g.stderr, "(%s has exited; this is its last screen)\n", r.Name)
	}
}

// followScreen prints a seat's screen each time it changes until ctx ends
// (Ctrl-C) or the seat exits or goes. A manager that does not answer for
// a while is asked again.
func followScreen(ctx context.Context, g *globals, name, on string, every time.Duration, asJSON bool) error {
	d := &managerDial{g: g}
	defer d.close()
	c, err := d.client()
	if err != nil {
		return err
	}
	lctx, cancel := ctxTimeout()
	row, err := c.Locate(lctx, name, on)
	cancel()
	var none *client.NoSeatError
	if errors.As(err, &none) {
		return usageError{err}
	}
	if err != nil {
		return epFailure(g, err)
	}
	ctx, stop := untilQuit(ctx, nil)
	defer stop()
	onTerm := false
	if f, ok := g.stdout.(*os.File); ok {
		onTerm = term.IsTerminal(f.Fd())
	}
	s := row.Seat()
	var last *client.ScreenReply
	var lastErr string
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		r, err := screenOnce(ctx, d, s)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && isGone(err):
			fmt.Fprintf(g.stderr, "seat %s is gone\n", name)
			return nil
		case err != nil:
			if msg := err.Error(); msg != lastErr {
				fmt.Fprintf(g.stderr, "(%s: %s; asking again)\n", name, msg)
				lastErr = msg
			}
		case last == nil || r.Screen != last.Screen || r.Running != last.Running:
			lastErr = ""
			switch {
			case asJSON:
			case onTerm:
				fmt.Fprint(g.stdout, "\x1b[H\x1b[2J")
			default:
				fmt.Fprintf(g.stdout, "--- %s %s ---\n", name, timeNow().Format("15:04:05.000"))
			}
			printScreen(g, r, asJSON, true)
			last = &r
			if !r.Running {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func screenOnce(ctx context.Context, d *managerDial, s client.Seat) (client.ScreenReply, error) {
	c, err := d.client()
	if err != nil {
		return client.ScreenReply{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.Screen(cctx, s)
}

// isGone reports whether a manager said it has no such seat.
func isGone(err error) bool {
	e := ep.AsError(err)
	return e != nil && e.Code == ep.CodeNotFound && !errors.Is(err, ep.ErrNoCommand)
}

func newStopCmd(g *globals) *cobra.Command {
	var on string
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "stop <name>",
		Short: "Stop a seat: SIGTERM, then SIGKILL after 3 s (--force: at once)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return onSeat(g, args[0], on, func(ctx context.Context, cl *client.Client, s client.Seat) error {
				r, err := cl.Stop(ctx, s, !force)
				if err != nil {
					return err
				}
				if asJSON {
					return g.resultJSON(struct {
						client.Row
						Ended string `json:"ended"`
					}{r, howEnded(r.Process, !force)})
				}
				fmt.Fprintf(g.stdout, "stopped %s: %s; it is offline\n", r.Name, howEnded(r.Process, !force))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&force, "force", false, "SIGKILL at once")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stopped seat's row as JSON")
	return cmd
}

func newInputCmd(g *globals) *cobra.Command {
	var on string
	var noEnter, keys, asJSON bool
	cmd := &cobra.Command{
		Use:   "input <name> <text...>",
		Short: "Type text into a seat (then Enter, unless --no-enter), or named keys with --keys",
		Long: `Type text into a seat's terminal as a paste, then a separate Enter unless
--no-enter. It prints how many bytes the seat's terminal accepted, and only
after it accepted them. Only the local operator may do this.

The text is 1 to 65536 characters, typed verbatim; put it after -- when it
starts with a dash: cotal input shell -- -x

--keys types named keys instead, raw, as a keyboard would (no paste markers),
named as tmux send-keys names them: Escape Enter Tab BSpace Space Up Down Left
Right Home End PageUp PageDown Insert Delete F1..F12, C-<key> and M-<key>, or a
single character. An unknown name is refused before anything is typed:
cotal input --keys vi Escape : q ! Enter`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			if keys {
				return typeKeys(g, args[0], on, noEnter, asJSON, args[1:])
			}
			text := strings.Join(args[1:], " ")
			if n := utf8.RuneCountInString(text); n == 0 || n > client.MaxInput {
				return usagef("text: %d characters; input takes 1 to %d", n, client.MaxInput)
			}
			return onSeat(g, args[0], on, func(ctx context.Context, cl *client.Client, s client.Seat) error {
				r, err := cl.Input(ctx, s, text, !noEnter)
				if err != nil {
					return err
				}
				if asJSON {
					return g.resultJSON(r)
				}
				fmt.Fprintf(g.stdout, "sent %d bytes to %s\n", r.Bytes, r.Name)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&noEnter, "no-enter", false, "do not press Enter after the text")
	cmd.Flags().BoolVar(&keys, "keys", false, "the arguments after the name are key names, typed raw")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the bytes the seat accepted as JSON")
	return cmd
}

// maxKeys is the most keys one keys command takes (its schema's bound).
const maxKeys = 256

// typeKeys types named keys into a seat, after checking every name here:
// a misspelt key is never sent.
func typeKeys(g *globals, name, on string, noEnter, asJSON bool, names []string) error {
	if noEnter {
		return usagef("--no-enter has no meaning with --keys: name Enter when you want it")
	}
	if len(names) > maxKeys {
		return usagef("%d keys: --keys takes at most %d at once", len(names), maxKeys)
	}
	if _, err := pty.ParseKeys(names...); err != nil {
		return usagef("%v; nothing was typed", err)
	}
	return onSeat(g, name, on, func(ctx context.Context, cl *client.Client, s client.Seat) error {
		r, err := cl.Keys(ctx, s, names...)
		if err != nil {
			return err
		}
		if asJSON {
			return g.resultJSON(r)
		}
		fmt.Fprintf(g.stdout, "sent %d bytes to %s\n", r.Bytes, r.Name)
		return nil
	})
}

// liveSeats asks every manager which seats still run (nil when none
// answers: a mesh without managers).
func liveSeats(g *globals) ([]string, error) {
	cl, nc, err := g.managers()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	rows, err := cl.Running(ctx)
	if err != nil {
		return nil, err
	}
	var live []string
	for _, r := range rows {
		live = append(live, r.Name)
	}
	return live, nil
}

func newSuperviseCmd(g *globals) *cobra.Command {
	var idFile, project string
	var readiness time.Duration
	var maxSessions int
	cmd := &cobra.Command{
		Use:   "supervise",
		Short: "Run an extra manager instance in this process, serving a running mesh",
		Long: `Serve the manager endpoint from this process too: a space may have several
managers, each with its own seats; ps asks them all. The instance id is kept
in --id-file so a restart is the same instance at a new epoch. Ctrl-C with live
seats asks for a second Ctrl-C before stopping them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkMaxSessions(maxSessions); err != nil {
				return err
			}
			t, err := g.resolveTarget()
			if err != nil {
				return err
			}
			h, err := host.Start(cmd.Context(), host.Config{
				Paths: t.paths, Open: t.record.Mode == config.ModeOpen, Log: g.stderr,
				ProjectDir: project, Readiness: readiness, MaxSessions: maxSessions,
				Supervise: &host.Supervise{URL: t.url, Creds: t.creds, InstanceFile: idFile},
			})
			if err != nil {
				return err
			}
			ctx, stop := untilQuit(cmd.Context(), hostQuit(g, h))
			defer stop()
			mgr := h.Manager()
			fmt.Fprintf(g.stdout, "manager instance %s serving space %s at epoch %d; Ctrl-C to stop\n", mgr.InstanceID(), t.paths.Space, mgr.Epoch())
			return h.Run(ctx)
		},
	}
	cmd.Flags().StringVar(&idFile, "id-file", "", "where this instance keeps its id (default the store's supervise.id)")
	cmd.Flags().StringVar(&project, "project", "", "the project whose .cotal/agents personas it spawns (default: the nearest to here)")
	cmd.Flags().DurationVar(&readiness, "readiness", seat.DefaultReadiness, "how long a spawned seat has to come up before its goal is uncertain")
	cmd.Flags().IntVar(&maxSessions, "max-sessions", attach.DefaultMaxSessions, "the most attach sessions this manager serves at once")
	return cmd
}

// describeStep is a spawn progress event in words.
func describeStep(s client.Step) string {
	switch s.Step {
	case "launched":
		return fmt.Sprintf("process launched (pid %d)", s.PID)
	case "ready":
		return "drew its first output and kept running: joining the mesh"
	case "":
		return s.State
	}
	return s.Step
}
