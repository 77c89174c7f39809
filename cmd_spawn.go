package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/seat/client"
)

func newSpawnCmd(g *globals) *cobra.Command {
	var a client.SpawnArgs
	var on string
	var detach, asJSON bool
	var followFor, readiness time.Duration
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
			a.Persona, a.ReadinessMs = args[0], readiness.Milliseconds()
			if err := checkReadiness(readiness); err != nil {
				return err
			}
			if err := a.CheckName(); err != nil {
				return usage(err)
			}
			cl, nc, err := g.managers()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := ctxTimeout()
			defer cancel()
			if on == "" {
				on = localManager(g)
			}
			sp, err := cl.Spawn(ctx, a, on)
			var refused *client.SpawnRefusal
			if err = client.RefusedSpawn(a.Persona, err); errors.As(err, &refused) && refused.Input {
				return usage(err)
			} else if err != nil {
				return err
			}
			clirender.Accepted(g.stdout, sp, detach, asJSON)
			if detach {
				return nil
			}
			wait := sp.Deadline() + followFor
			fctx, fcancel := context.WithTimeout(context.Background(), wait)
			defer fcancel()
			res, err := cl.AwaitSpawn(fctx, sp, clirender.SpawnWatch(g.stdout, g.stderr, sp, asJSON))
			if err != nil {
				return fmt.Errorf("spawn of %s: no outcome within %s; see `cotal ps` and `cotal screen %s`", sp.Name, wait, sp.Name)
			}
			if !clirender.SpawnResult(g.stdout, sp.SpawnAccepted, res, asJSON) {
				return exitError{exitFail}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&a.Name, "name", "", "the seat's name (refused if a live seat has it); default the persona's, numbered")
	fl.StringVar(&a.Cwd, "cwd", "", "working directory of the seat")
	fl.StringVar(&a.Role, "role", "", "role the seat serves (default the persona's)")
	fl.StringVar(&a.Prompt, "prompt", "", "first prompt for an agent harness")
	fl.BoolVar(&a.Worktree, "worktree", false, "run the seat in a git worktree of its own (.cotal/worktrees/<seat>)")
	fl.StringVar(&a.Branch, "branch", "", "with --worktree: the branch (default cotal/<seat>; an existing one is checked out)")
	fl.StringVar(&a.Base, "base", "", "with --worktree: the ref a new branch starts from (default HEAD)")
	fl.StringVar(&on, "on", "", "spawn on this manager instance (default: on a mesh other hosts share, this machine's)")
	fl.BoolVarP(&detach, "detach", "d", false, "return once the manager accepted")
	fl.BoolVar(&asJSON, "json", false, "print as JSON")
	fl.DurationVar(&readiness, "readiness", 0, "how long this seat has to come up before the spawn reads uncertain (default: its persona's readiness:, else the manager's)")
	fl.DurationVar(&followFor, "follow-margin", 10*time.Second, "how long past the readiness bound to wait for the outcome")
	return cmd
}
