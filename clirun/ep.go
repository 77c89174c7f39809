package clirun

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// Describe asks an endpoint (or its instance on) what it serves, every
// contract digest-verified, within timeout.
func Describe(c Caller, endpoint, on string, timeout time.Duration) (*ep.Described, error) {
	if _, err := proto.EndpointToken(endpoint); err != nil {
		return nil, bad(err)
	}
	ec, nc, err := c.Control()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d, err := ec.Describe(ctx, endpoint, on)
	return d, Refused(err)
}

// Invocation is one call of an endpoint's command.
type Invocation struct {
	Endpoint, Command string
	Args              string // the args as JSON; "" for a void command
	On                string // the one instance to call, never re-issued
	Timeout           time.Duration
}

// Invoke checks the call and makes it: args that are not JSON, a bad
// name or deadline are refused before anything is sent; args the
// command's schema refuses come back as the endpoint's refusal.
func Invoke(c Caller, in Invocation) (*ep.Result, error) {
	if _, err := proto.EndpointToken(in.Endpoint); err != nil {
		return nil, bad(err)
	}
	if !proto.ValidCommand(in.Command) {
		return nil, usagef("command %q must be 1-32 characters of a-z 0-9 -", in.Command)
	}
	var raw json.RawMessage
	if in.Args != "" {
		if !json.Valid([]byte(in.Args)) {
			return nil, usagef("--args is not JSON: %s (the command did not run)", in.Args)
		}
		raw = json.RawMessage(in.Args)
	}
	if in.Timeout <= 0 {
		return nil, usagef("--timeout must be positive")
	}
	ec, nc, err := c.Control()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), in.Timeout)
	defer cancel()
	var opts []ep.CallOption
	if in.On != "" {
		if _, err := ec.Describe(ctx, in.Endpoint, in.On); err != nil {
			return nil, Refused(err)
		}
		opts = append(opts, ep.On(in.On))
	}
	res, err := ec.Call(ctx, in.Endpoint, in.Command, raw, opts...)
	return res, Refused(err)
}

// DeregisterInstance removes an endpoint instance's registration when it
// is gone; a refusal of the deregistration itself (the instance answered,
// is not registered, ...) is the DeregisterRefusal, not an error.
func DeregisterInstance(c Caller, endpoint, instance string) (*ep.DeregisterRefusal, error) {
	if instance == "" || !proto.ValidID(instance) || strings.HasPrefix(instance, "local.") {
		return nil, usagef("--instance needs a whole instance id (1-64 of A-Z a-z 0-9 _ -), got %q", instance)
	}
	if _, err := proto.EndpointToken(endpoint); err != nil {
		return nil, bad(err)
	}
	ec, nc, err := c.Control()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	err = ec.DeregisterInstance(ctx, endpoint, instance)
	var r *ep.DeregisterRefusal
	if err != nil && !errors.As(err, &r) {
		return nil, Refused(err)
	}
	return r, nil
}
