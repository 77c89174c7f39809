package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat"
)

// census is one ps scatter: every manager's rows, and who did not answer.
type census struct {
	Rows     []censusRow             `json:"rows"`
	Managers []string                `json:"managers"`
	Missing  []ep.MissingSlot        `json:"missing,omitempty"`
	Result   *ep.ScatterResult       `json:"-"`
	Replies  map[string]seat.PsReply `json:"-"`
}

type censusRow struct {
	Manager string `json:"manager"`
	seat.Row
	ManagerNowMs int64 `json:"-"`
}

// takeCensus scatters ps over every registered manager.
func takeCensus(ctx context.Context, c *ep.Client, on string) (*census, error) {
	var res *ep.ScatterResult
	var err error
	if on != "" {
		r, cerr := c.Call(ctx, seat.Endpoint, "ps", nil, ep.On(on))
		if cerr != nil {
			return nil, cerr
		}
		res = &ep.ScatterResult{Complete: true, Replies: []ep.ScatterReply{{InstanceID: r.Responder.InstanceID, Epoch: r.Responder.Epoch, Data: r.Data}}}
	} else {
		res, err = c.Scatter(ctx, seat.Endpoint, "ps", nil, ep.Timeout(5*time.Second), ep.ProbeAfter(time.Second))
		if err != nil {
			return nil, err
		}
	}
	cs := &census{Result: res, Missing: res.Missing, Replies: map[string]seat.PsReply{}}
	for _, r := range res.Replies {
		if r.Error != nil {
			continue
		}
		var ps seat.PsReply
		if json.Unmarshal(r.Data, &ps) != nil {
			continue
		}
		cs.Replies[r.InstanceID] = ps
		cs.Managers = append(cs.Managers, r.InstanceID)
		for _, row := range ps.Seats {
			cs.Rows = append(cs.Rows, censusRow{Manager: r.InstanceID, Row: row, ManagerNowMs: ps.NowMs})
		}
	}
	sort.Strings(cs.Managers)
	sort.Slice(cs.Rows, func(i, j int) bool {
		if cs.Rows[i].Name != cs.Rows[j].Name {
			return cs.Rows[i].Name < cs.Rows[j].Name
		}
		return cs.Rows[i].Manager < cs.Rows[j].Manager
	})
	return cs, nil
}

// locate finds the manager running a seat: a live one first.
func locate(ctx context.Context, c *ep.Client, name, on string) (string, seat.Row, error) {
	cs, err := takeCensus(ctx, c, on)
	if err != nil {
		return "", seat.Row{}, err
	}
	var found *censusRow
	for i, r := range cs.Rows {
		if r.Name == name && (found == nil || r.Process == "running") {
			found = &cs.Rows[i]
		}
	}
	if found == nil {
		names := make([]string, 0, len(cs.Rows))
		for _, r := range cs.Rows {
			names = append(names, r.Name)
		}
		return "", seat.Row{}, usagef("no seat %q (seats: %s)", name, listOrNone(names))
	}
	return found.Manager, found.Row, nil
}

func ageMs(nowMs, t int64) string {
	if t == 0 {
		return "-"
	}
	return strings.TrimSuffix(humanAge(time.Duration(nowMs-t)*time.Millisecond), " ago")
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
			c, nc, err := g.epClient()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := ctxTimeout()
			defer cancel()
			cs, err := takeCensus(ctx, c, on)
			if err != nil {
				return epFailure(g, err)
			}
			if asJSON {
				b, _ := json.MarshalIndent(cs, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
			} else {
				printCensus(g, cs, wide)
			}
			if len(cs.Missing) > 0 || !cs.Result.Complete {
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

func printCensus(g *globals, cs *census, wide bool) {
	if len(cs.Rows) == 0 {
		fmt.Fprintf(g.stdout, "no seats (%d manager(s) answered)\n", len(cs.Managers))
	} else {
		tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
		head := "NAME\tPROCESS\tFOR\tMESH\tFOR\tPID\tROLE\tPERSONA\tOUTPUT\tSANDBOX\tMANAGER"
		if wide {
			head += "\tID\tUID\tGOAL"
		}
		fmt.Fprintln(tw, head)
		for _, r := range cs.Rows {
			since := r.StartedMs
			if r.ExitedMs != 0 {
				since = r.ExitedMs
			}
			mesh := r.Mesh
			if r.Process == "running" && r.Mesh == "offline" {
				mesh += " (" + r.State + ")"
			}
			line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s", r.Name, r.Process, ageMs(r.ManagerNowMs, since),
				mesh, ageMs(r.ManagerNowMs, r.MeshSinceMs), r.PID, dash(r.Role), r.Persona, ageMs(r.ManagerNowMs, r.LastOutputMs),
				sandboxColumn(r.Sandbox), r.Manager)
			if wide {
				line += fmt.Sprintf("\t%s\t%s\t%s", r.ID, r.LifecycleUID, r.GoalID)
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
		for _, r := range cs.Rows {
			if strings.HasPrefix(r.Sandbox, "unsandboxed") && r.Process == "running" {
				fmt.Fprintf(g.stdout, "%s is %s\n", r.Name, r.Sandbox)
			}
		}
	}
	for _, m := range cs.Missing {
		fmt.Fprintf(g.stderr, "manager %s did not answer (%s): census incomplete\n", m.InstanceID, dashS(string(m.Liveness)))
	}
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
		a         seat.SpawnArgs
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
			c, nc, err := g.epClient()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := ctxTimeout()
			defer cancel()
			opts := []ep.CallOption{ep.Timeout(10 * time.Second)}
			if on != "" {
				opts = append(opts, ep.On(on))
			}
			// Progress events of this caller's goals, subscribed before
			// the spawn so none is missed.
			steps := make(chan ep.GoalProgress, 16)
			if filter, err := ep.GoalProgressFilter(g.spaceOf(c), seat.Endpoint, c.Caller()); err == nil {
				if sub, err := nc.Subscribe(filter, func(m *nats.Msg) {
					var p ep.GoalProgress
					if json.Unmarshal(m.Data, &p) == nil {
						select {
						case steps <- p:
						default:
						}
					}
				}); err == nil {
					defer sub.Unsubscribe()
					_ = nc.Flush()
				}
			}
			r, err := c.Call(ctx, seat.Endpoint, "spawn", a, opts...)
			if err != nil {
				return epFailure(g, err)
			}
			var acc seat.SpawnAccepted
			if err := json.Unmarshal(r.Data, &acc); err != nil {
				return fmt.Errorf("spawn answered with garbage: %w", err)
			}
			if !asJSON {
				fmt.Fprintf(g.stdout, "accepted: seat %s (%s.%s, lifecycle %s) on manager %s; goal %s\n", acc.Name, acc.Owner, acc.Actor, acc.UID, r.Responder.InstanceID, acc.GoalID)
			}
			if detach {
				if asJSON {
					fmt.Fprintln(g.stdout, string(r.Data))
				}
				return nil
			}
			wait := time.Duration(acc.ReadinessDeadlineMs)*time.Millisecond + followFor
			fctx, fcancel := context.WithTimeout(context.Background(), wait)
			defer fcancel()
			said := false
			for {
				for drained := false; !drained; {
					select {
					case p := <-steps:
						if p.GoalID == acc.GoalID && !asJSON {
							fmt.Fprintf(g.stdout, "%s: %s\n", acc.Name, describeStep(p))
						}
					default:
						drained = true
					}
				}
				res, ok, err := c.GoalResult(fctx, seat.Endpoint, acc.GoalID, ep.On(r.Responder.InstanceID), ep.Timeout(5*time.Second))
				if err == nil && ok {
					return printSpawnResult(g, acc, res, asJSON)
				}
				if fctx.Err() != nil {
					return fmt.Errorf("spawn of %s: no outcome within %s; see `cotal ps` and `cotal screen %s`", acc.Name, wait, acc.Name)
				}
				if !said && !asJSON {
					said = true
					fmt.Fprintf(g.stderr, "waiting for %s to come up (at most %s)...\n", acc.Name, time.Duration(acc.ReadinessDeadlineMs)*time.Millisecond)
				}
				select {
				case <-fctx.Done():
				case <-time.After(150 * time.Millisecond):
				}
			}
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

func printSpawnResult(g *globals, acc seat.SpawnAccepted, res ep.GoalResult, asJSON bool) error {
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
			fmt.Fprintf(g.stdout, "uncertain: %s did not show it was up within the bound; it is kept running: inspect it with `cotal screen %s` and `cotal ps` rather than spawning it again\n", acc.Name, acc.Name)
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

// seatCall locates a seat's manager and calls a command pinned to it.
func seatCall(g *globals, name, on, command string, args any, out any) error {
	c, nc, err := g.epClient()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	iid, _, err := locate(ctx, c, name, on)
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			return err
		}
		return epFailure(g, err)
	}
	r, err := c.Call(ctx, seat.Endpoint, command, args, ep.On(iid), ep.Timeout(10*time.Second))
	if err != nil {
		return epFailure(g, err)
	}
	return json.Unmarshal(r.Data, out)
}

func newScreenCmd(g *globals) *cobra.Command {
	var on string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "screen <name>",
		Short: "Print a seat's current screen",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			var r seat.ScreenReply
			if err := seatCall(g, args[0], on, "screen", map[string]string{"name": args[0]}, &r); err != nil {
				return err
			}
			if asJSON {
				b, _ := json.MarshalIndent(r, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			fmt.Fprintln(g.stdout, r.Screen)
			if !r.Running {
				fmt.Fprintf(g.stderr, "(%s has exited; this is its last screen)\n", r.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newStopCmd(g *globals) *cobra.Command {
	var on string
	var force bool
	cmd := &cobra.Command{
		Use:   "stop <name>",
		Short: "Stop a seat: SIGTERM, then SIGKILL after 3 s (--force: at once)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			var r seat.Row
			if err := seatCall(g, args[0], on, "despawn", map[string]any{"name": args[0], "graceful": !force}, &r); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "stopped %s (%s); it is offline\n", r.Name, r.Process)
			return nil
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&force, "force", false, "SIGKILL at once")
	return cmd
}

func newInputCmd(g *globals) *cobra.Command {
	var on string
	var noEnter bool
	cmd := &cobra.Command{
		Use:   "input <name> <text...>",
		Short: "Type text into a seat (then Enter, unless --no-enter)",
		Long: `Type text into a seat's terminal as a paste, then a separate Enter unless
--no-enter. It prints how many bytes the seat's terminal accepted, and only
after it accepted them. Only the local operator may do this.

The text is 1 to 65536 characters, typed verbatim; put it after -- when it
starts with a dash: cotal input shell -- -x`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			var r seat.InputReply
			text := strings.Join(args[1:], " ")
			if n := utf8.RuneCountInString(text); n == 0 || n > seat.MaxInput {
				return usagef("text: %d characters; input takes 1 to %d", n, seat.MaxInput)
			}
			if err := seatCall(g, args[0], on, "input", map[string]any{"name": args[0], "text": text, "enter": !noEnter}, &r); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "sent %d bytes to %s\n", r.Bytes, r.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&noEnter, "no-enter", false, "do not press Enter after the text")
	return cmd
}

// liveSeats asks every manager which seats still run (nil when none
// answers: a mesh without managers).
func liveSeats(g *globals) ([]string, error) {
	c, nc, err := g.epClient()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	cs, err := takeCensus(ctx, c, "")
	if err != nil {
		if e := ep.AsError(err); e != nil && e.Code == ep.CodeFailedPrecondition {
			return nil, nil // no manager registered
		}
		return nil, err
	}
	var live []string
	for _, r := range cs.Rows {
		if r.Process == "running" {
			live = append(live, r.Name)
		}
	}
	return live, nil
}

func newSuperviseCmd(g *globals) *cobra.Command {
	var idFile, project string
	var readiness time.Duration
	cmd := &cobra.Command{
		Use:   "supervise",
		Short: "Run an extra manager instance in this process, serving a running mesh",
		Long: `Serve the manager endpoint from this process too: a space may have several
managers, each with its own seats; ps asks them all. The instance id is kept
in --id-file so a restart is the same instance at a new epoch. Ctrl-C with live
seats asks for a second Ctrl-C before stopping them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := g.resolveTarget()
			if err != nil {
				return err
			}
			h, err := host.Start(cmd.Context(), host.Config{
				Paths: t.paths, Open: t.record.Mode == config.ModeOpen, Log: g.stderr,
				ProjectDir: project, Readiness: readiness,
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
	return cmd
}

// describeStep is a spawn progress event in words.
func describeStep(p ep.GoalProgress) string {
	var d struct {
		Step string `json:"step"`
		PID  int    `json:"pid"`
	}
	_ = json.Unmarshal(p.Data, &d)
	switch d.Step {
	case "launched":
		return fmt.Sprintf("process launched (pid %d)", d.PID)
	case "ready":
		return "drew its first output and kept running: joining the mesh"
	case "":
		return p.State
	}
	return d.Step
}

// spaceOf is the space the client acts in.
func (g *globals) spaceOf(_ *ep.Client) string {
	_, p, _, err := g.paths()
	if err != nil {
		return ""
	}
	return p.Space
}
