package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/seat/client"
)

// seatFlags are the flags of a command on one seat: the manager it is on,
// and --json.
type seatFlags struct {
	on     string
	asJSON bool
}

// add gives cmd the flags; jsonUsage says what --json prints.
func (f *seatFlags) add(cmd *cobra.Command, jsonUsage string) *cobra.Command {
	cmd.Flags().StringVar(&f.on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, jsonUsage)
	return cmd
}

func newScreenCmd(g *globals) *cobra.Command {
	var f seatFlags
	var follow bool
	var every, wait time.Duration
	var until string
	cmd := f.add(&cobra.Command{
		Use:   "screen <name>",
		Short: "Print a seat's current screen (--follow: each time it changes; --until: once it shows a text)",
		Long: `Print a seat's current screen as text. --follow keeps asking, every
--interval, and prints the screen again each time it changed, until Ctrl-C or
the seat exits (its last screen is printed). On a terminal each screen
replaces the last; otherwise each is preceded by a line "--- <name> <time> ---".

--until TEXT waits, at the seat's manager, for the screen to show TEXT, at most
--wait (up to 30s), and prints the first screen that does. When it does not
come in time, or the seat's output ended without it, the last screen is
printed and cotal exits 1. With --json the reply's "matched" says which.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			switch {
			case until != "" && follow:
				return cliargs.Usagef("--until and --follow: give one (--until prints one screen, --follow every one)")
			case until == "" && cmd.Flags().Changed("wait"):
				return cliargs.Usagef("--wait is how long --until waits: give --until TEXT")
			case cmd.Flags().Changed("until") && until == "":
				return cliargs.Usagef("--until: say what text to wait for")
			}
			if until != "" {
				r, err := clirun.ScreenUntil(g.caller(), name, f.on, until, wait)
				if err != nil {
					return err
				}
				clirender.Screen(g.stdout, g.stderr, r, f.asJSON, false)
				if r.Matched == nil || !*r.Matched {
					return fmt.Errorf("%q is not on %s's screen (waited up to %s)", until, name, wait)
				}
				return nil
			}
			if !follow {
				r, err := clirun.Screen(g.caller(), name, f.on)
				return shown(err, func() { clirender.Screen(g.stdout, g.stderr, r, f.asJSON, false) })
			}
			ctx, stop := untilQuit(cmd.Context(), nil)
			defer stop()
			show, failed := clirender.ScreenFollower(g.stdout, g.stderr, name, f.asJSON)
			gone, err := clirun.FollowScreen(ctx, g.caller(), name, f.on, every, show, failed)
			if gone {
				fmt.Fprintf(g.stderr, "seat %s is gone\n", name)
			}
			return err
		},
	}, "print as JSON (with --follow, one object per line)")
	cmd.Flags().BoolVar(&follow, "follow", false, "print the screen each time it changes, until Ctrl-C")
	cmd.Flags().DurationVar(&every, "interval", 250*time.Millisecond, "with --follow: how often to ask for the screen")
	cmd.Flags().StringVar(&until, "until", "", "wait for the screen to show this text, then print it")
	cmd.Flags().DurationVar(&wait, "wait", 10*time.Second, "with --until: how long to wait, at most 30s")
	return cmd
}

func newStopCmd(g *globals) *cobra.Command {
	var f seatFlags
	var force bool
	cmd := f.add(&cobra.Command{
		Use:   "stop <name>",
		Short: "Stop a seat: SIGTERM, then SIGKILL after 3 s (--force: at once)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := clirun.Stop(g.caller(), args[0], f.on, !force)
			return shown(err, func() { clirender.Stopped(g.stdout, r, !force, f.asJSON) })
		},
	}, "print the stopped seat's row as JSON")
	cmd.Flags().BoolVar(&force, "force", false, "SIGKILL at once")
	return cmd
}

func newInputCmd(g *globals) *cobra.Command {
	var f seatFlags
	var noEnter, keys bool
	cmd := f.add(&cobra.Command{
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
			r, err := clirun.Type(g.caller(), args[0], f.on, args[1:], keys, !noEnter)
			return shown(err, func() { clirender.Typed(g.stdout, r, f.asJSON) })
		},
	}, "print the bytes the seat accepted as JSON")
	cmd.Flags().BoolVar(&noEnter, "no-enter", false, "do not press Enter after the text")
	cmd.Flags().BoolVar(&keys, "keys", false, "the arguments after the name are key names, typed raw")
	return cmd
}

// newAnswerCmd is `cotal approve` (decision allow) or `cotal deny`: a
// person's answer to the permission prompt a seat waits on, sent back
// through the hook that holds it, so no keystroke answers the dialog.
func newAnswerCmd(g *globals, decision string) *cobra.Command {
	var f seatFlags
	use, short, long := "approve <name>", "Approve what a seat waits on (its permission prompt)",
		`Approve the permission prompt a seat waits on ("approve Bash(touch x)", as ps
and the dashboard show it). The answer goes back through the seat's harness
hook that holds the prompt, as the harness's own allow: nothing is typed
into the seat. A seat waiting on something cotal cannot answer (a question,
a dialog at its start) says so: attach to answer it. Only the local operator
may answer.`
	if decision == client.AnswerDeny {
		use, short, long = "deny <name> [reason...]", "Deny what a seat waits on (its permission prompt), telling its model why",
			`Deny the permission prompt a seat waits on. The reason, when given, is told
to its model with the refusal. Like approve, the answer goes back through the
seat's hook; nothing is typed into the seat. Only the local operator may
answer.`
	}
	return f.add(&cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := clirun.Answer(g.caller(), args[0], f.on, decision, args[1:])
			return shown(err, func() { clirender.Answered(g.stdout, r, f.asJSON) })
		},
	}, "print the answer as JSON")
}
