package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
)

func newDescribeCmd(g *globals) *cobra.Command {
	var on string
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "describe <endpoint>",
		Short: "Ask an endpoint what it serves, verifying every contract",
		Long: `Describe an endpoint off the wire: its owner, the instance and epoch that
answered, and each command with its capability and authorization modes. Every
contract is fetched from the space's contract store and digest-verified.

--on pins the describe to one instance.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if _, err := proto.EndpointToken(args[0]); err != nil {
				return usage(err)
			}
			c, nc, err := g.epClient()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			d, err := c.Describe(ctx, args[0], on)
			if err != nil {
				return epFailure(g, err)
			}
			clirender.Describe(g.stdout, d, asJSON)
			return nil
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "describe one instance (its whole instance id)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verified describe answer as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for an answer")
	return cmd
}

func newInvokeCmd(g *globals) *cobra.Command {
	var on, argsJSON string
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "invoke <endpoint> <command>",
		Short: "Call one command of an endpoint, checking args against its schema first",
		Long: `Describe the endpoint, check --args against the command's input schema, and
call it. Args that do not fit are refused before anything is sent: the command
did not run. The reply's data is printed as indented JSON.

--on pins the call to one instance (never re-issued); --timeout is the call's
deadline.`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			if _, err := proto.EndpointToken(args[0]); err != nil {
				return usage(err)
			}
			if !proto.ValidCommand(args[1]) {
				return usagef("command %q must be 1-32 characters of a-z 0-9 -", args[1])
			}
			var raw json.RawMessage
			if argsJSON != "" {
				if !json.Valid([]byte(argsJSON)) {
					return usagef("--args is not JSON: %s (the command did not run)", argsJSON)
				}
				raw = json.RawMessage(argsJSON)
			}
			if timeout <= 0 {
				return usagef("--timeout must be positive")
			}
			c, nc, err := g.epClient()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			var opts []ep.CallOption
			if on != "" {
				if _, err := c.Describe(ctx, args[0], on); err != nil {
					return epFailure(g, err)
				}
				opts = append(opts, ep.On(on))
			}
			res, err := c.Call(ctx, args[0], args[1], raw, opts...)
			if err != nil {
				return epFailure(g, err)
			}
			clirender.Invoked(g.stdout, args[1], res, asJSON)
			return nil
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "", "the command's args as JSON (omit for a void command)")
	cmd.Flags().StringVar(&on, "on", "", "call one instance (its whole instance id)")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "the call's deadline")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {responder, data} as JSON")
	return cmd
}

func newDeregisterInstanceCmd(g *globals) *cobra.Command {
	var instance, endpoint string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "deregister-instance --instance <id>",
		Short: "Remove the registration of an endpoint instance that is gone",
		Long: `Delete an endpoint instance's svc registration, and only when it is gone: it
must be registered, a describe pinned to it must go unanswered, and the broker
must affirm that nobody holds its rail. The delete is pinned to the revision
read. There is no --force.

Refusals: not-registered, instance-answered, instance-not-affirmed-gone,
liveness-unestablishable, superseded.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if instance == "" || !proto.ValidID(instance) || strings.HasPrefix(instance, "local.") {
				return usagef("--instance needs a whole instance id (1-64 of A-Z a-z 0-9 _ -), got %q", instance)
			}
			if _, err := proto.EndpointToken(endpoint); err != nil {
				return usage(err)
			}
			c, nc, err := g.epClient()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := ctxTimeout()
			defer cancel()
			err = c.DeregisterInstance(ctx, endpoint, instance)
			var r *ep.DeregisterRefusal
			if err != nil && !errors.As(err, &r) {
				return epFailure(g, err)
			}
			clirender.Deregistered(g.stdout, g.stderr, endpoint, instance, r, asJSON)
			if r != nil {
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&instance, "instance", "", "the whole instance id to deregister")
	cmd.Flags().StringVar(&endpoint, "endpoint", "manager", "the endpoint the instance serves")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
