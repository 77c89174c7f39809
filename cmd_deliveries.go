package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh"
)

func newDeliveriesCmd(g *globals) *cobra.Command {
	var pending, asJSON bool
	cmd := &cobra.Command{
		Use:   "deliveries",
		Short: "List what waits for each seat and identity, at which rung and why",
		Long: `List, per identity and per seat, the DMs, tasks and stored mentions that
have not been settled yet: stored (the broker has them, the recipient's
connector has not taken them) and taken (its connector holds them, not yet
injected into the seat's terminal or read). The oldest column is when the
oldest of them was stored; the why column says what holds them: offline,
held by a person typing in the seat, attention, a seat that reads its inbox
itself, or a full inbox.

Only the local operator may list deliveries.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if g.creds != "" {
				return usage(errors.New("deliveries lists every identity's waiting messages: only the local operator may (drop --creds)"))
			}
			ctx, cancel := ctxTimeout()
			defer cancel()
			e, err := g.endpoint(ctx, mesh.Options{OneShot: true})
			if err != nil {
				return err
			}
			defer e.Close()
			cl, nc, err := g.managers()
			if err != nil {
				return err
			}
			defer nc.Close()
			cs, err := cl.Census(ctx, "")
			if err != nil {
				return epFailure(g, err)
			}
			rows, err := host.Deliveries(ctx, e, cs)
			if err != nil {
				return err
			}
			if pending {
				kept := rows[:0]
				for _, r := range rows {
					if r.Stored+r.Taken > 0 {
						kept = append(kept, r)
					}
				}
				rows = kept
			}
			if asJSON {
				printJSON(g.stdout, map[string]any{"rows": rows, "incomplete": cs.Incomplete()})
			} else {
				clirender.Deliveries(g.stdout, rows, pending)
			}
			if cs.Incomplete() {
				fmt.Fprintln(g.stderr, "not every manager answered: seats of the silent ones show no taken count (see cotal ps)")
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&pending, "pending", false, "list only identities with something waiting")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
