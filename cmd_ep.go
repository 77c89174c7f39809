package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
)

func newDescribeCmd(g *globals) *cobra.Command {
	var on string
	var asJSON bool
	var timeout time.Duration
	cmd := withJSON(&cobra.Command{
		Use:   "describe <endpoint>",
		Short: "Ask an endpoint what it serves, verifying every contract",
		Long: `Describe an endpoint off the wire: its owner, the instance and epoch that
answered, and each command with its capability and authorization modes. Every
contract is fetched from the space's contract store and digest-verified.

--on pins the describe to one instance.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			d, err := clirun.Describe(g.caller(), args[0], on, timeout)
			return shown(err, func() { clirender.Describe(g.stdout, d, asJSON) })
		},
	}, &asJSON, "print the verified describe answer as JSON")
	cmd.Flags().StringVar(&on, "on", "", "describe one instance (its whole instance id)")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for an answer")
	return cmd
}

func newInvokeCmd(g *globals) *cobra.Command {
	var in clirun.Invocation
	var asJSON bool
	cmd := withJSON(&cobra.Command{
		Use:   "invoke <endpoint> <command>",
		Short: "Call one command of an endpoint, checking args against its schema first",
		Long: `Describe the endpoint, check --args against the command's input schema, and
call it. Args that do not fit are refused before anything is sent: the command
did not run. The reply's data is printed as indented JSON.

--on pins the call to one instance (never re-issued); --timeout is the call's
deadline.`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			in.Endpoint, in.Command = args[0], args[1]
			res, err := clirun.Invoke(g.caller(), in)
			return shown(err, func() { clirender.Invoked(g.stdout, in.Command, res, asJSON) })
		},
	}, &asJSON, "print {responder, data} as JSON")
	cmd.Flags().StringVar(&in.Args, "args", "", "the command's args as JSON (omit for a void command)")
	cmd.Flags().StringVar(&in.On, "on", "", "call one instance (its whole instance id)")
	cmd.Flags().DurationVar(&in.Timeout, "timeout", 10*time.Second, "the call's deadline")
	return cmd
}

func newDeregisterInstanceCmd(g *globals) *cobra.Command {
	var instance, endpoint string
	var asJSON bool
	cmd := withJSON(&cobra.Command{
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
			r, err := clirun.DeregisterInstance(g.caller(), endpoint, instance)
			if err != nil {
				return err
			}
			if clirender.Deregistered(g.stdout, g.stderr, endpoint, instance, r, asJSON); r != nil {
				return exitError{exitFail}
			}
			return nil
		},
	}, &asJSON, "print as JSON")
	cmd.Flags().StringVar(&instance, "instance", "", "the whole instance id to deregister")
	cmd.Flags().StringVar(&endpoint, "endpoint", "manager", "the endpoint the instance serves")
	return cmd
}
