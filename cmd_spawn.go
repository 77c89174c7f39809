package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/launch"
	"github.com/cotal-go/cotal/seat/client"
)

func newSpawnCmd(g *globals) *cobra.Command {
	var s clirun.Spawning
	var asJSON bool
	var readiness time.Duration
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
			s.Persona, s.ReadinessMs = args[0], readiness.Milliseconds()
			if err := launch.CheckReadiness(readiness); err != nil {
				return err
			}
			s.Accepted = func(sp client.Spawned) { clirender.Accepted(g.stdout, sp, s.Detach, asJSON) }
			s.Watch = func(sp client.Spawned) client.Watch { return clirender.SpawnWatch(g.stdout, g.stderr, sp, asJSON) }
			sp, res, err := clirun.Spawn(g.caller(), s)
			if err != nil || s.Detach {
				return err
			}
			if !clirender.SpawnResult(g.stdout, sp.SpawnAccepted, res, asJSON) {
				return exitError{exitFail}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&s.Name, "name", "", "the seat's name (refused if a live seat has it); default the persona's, numbered")
	fl.StringVar(&s.Cwd, "cwd", "", "working directory of the seat")
	fl.StringVar(&s.Role, "role", "", "role the seat serves (default the persona's)")
	fl.StringVar(&s.Prompt, "prompt", "", "first prompt for an agent harness")
	fl.BoolVar(&s.Worktree, "worktree", false, "run the seat in a git worktree of its own (.cotal/worktrees/<seat>)")
	fl.StringVar(&s.Branch, "branch", "", "with --worktree: the branch (default cotal/<seat>; an existing one is checked out)")
	fl.StringVar(&s.Base, "base", "", "with --worktree: the ref a new branch starts from (default HEAD)")
	fl.StringVar(&s.On, "on", "", "spawn on this manager instance (default: on a mesh other hosts share, this machine's)")
	fl.BoolVarP(&s.Detach, "detach", "d", false, "return once the manager accepted")
	fl.BoolVar(&asJSON, "json", false, "print as JSON")
	fl.DurationVar(&readiness, "readiness", 0, "how long this seat has to come up before the spawn reads uncertain (default: its persona's readiness:, else the manager's)")
	fl.DurationVar(&s.FollowFor, "follow-margin", 10*time.Second, "how long past the readiness bound to wait for the outcome")
	return cmd
}
