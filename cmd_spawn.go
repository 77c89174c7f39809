package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
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
			a.Persona = args[0]
			if err := checkReadiness(readiness); err != nil {
				return err
			}
			a.ReadinessMs = readiness.Milliseconds()
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
				w.Step = func(s client.Step) { fmt.Fprintf(g.stdout, "%s: %s\n", sp.Name, clirender.Step(s)) }
				w.Pending = func() { fmt.Fprintf(g.stderr, "waiting for %s to come up (at most %s)...\n", sp.Name, sp.Deadline()) }
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
	fl.BoolVar(&a.Worktree, "worktree", false, "run the seat in a git worktree of its own (.cotal/worktrees/<seat>)")
	fl.StringVar(&a.Branch, "branch", "", "with --worktree: the branch (default cotal/<seat>; an existing one is checked out)")
	fl.StringVar(&a.Base, "base", "", "with --worktree: the ref a new branch starts from (default HEAD)")
	fl.StringVar(&on, "on", "", "spawn on this manager instance")
	fl.BoolVarP(&detach, "detach", "d", false, "return once the manager accepted")
	fl.BoolVar(&asJSON, "json", false, "print as JSON")
	fl.DurationVar(&readiness, "readiness", 0, "how long this seat has to come up before the spawn reads uncertain (default: its persona's readiness:, else the manager's)")
	fl.DurationVar(&followFor, "follow-margin", 10*time.Second, "how long past the readiness bound to wait for the outcome")
	return cmd
}

// spawnRefused is a manager's refusal of a spawn as a sentence: bad input
// (no such persona, a file that does not load, a name that is not a
// token or is taken) exits 2, anything else 1; either way nothing was
// started.
func spawnRefused(persona string, err error) error {
	e := proto.AsError(err)
	if e == nil {
		return err
	}
	msg := fmt.Errorf("cannot spawn %s: %s; nothing was started", persona, strings.TrimSuffix(e.Message, "."))
	switch e.Code {
	case proto.CodeBadRequest, proto.CodeNotFound, proto.CodeFailedPrecondition, proto.CodeAlreadyExists:
		return usage(msg)
	}
	if e.EffectiveOutcome() == proto.Unknown {
		return fmt.Errorf("cannot tell whether %s was spawned: %s; see `cotal ps`", persona, e.Message)
	}
	return msg
}

func printSpawnResult(g *globals, acc client.SpawnAccepted, res ep.GoalResult, asJSON bool) error {
	if !clirender.SpawnResult(g.stdout, acc, res, asJSON) {
		return exitError{exitFail}
	}
	return nil
}
