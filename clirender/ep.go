package clirender

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// Describe prints a verified describe answer: the responder, then each
// command with its capability and how it is reached.
func Describe(w io.Writer, d *ep.Described, asJSON bool) {
	if asJSON {
		JSON(w, struct {
			Responder ep.Responder         `json:"responder"`
			Answer    proto.DescribeAnswer `json:"answer"`
		}{d.Responder, d.Answer})
		return
	}
	desc := d.Answer.Descriptor
	fmt.Fprintf(w, "%s  owner %s · instance %s · epoch %d\n", desc.Endpoint, desc.Owner, d.Responder.InstanceID, d.Responder.Epoch)
	width := 0
	for _, c := range d.Commands {
		width = max(width, len(c.Name))
	}
	for _, c := range d.Commands {
		reach := "untargeted"
		if c.Targeted {
			var modes []string
			for _, m := range c.Modes {
				if m != proto.ModeNone {
					modes = append(modes, string(m))
				}
			}
			reach = "targeted (" + strings.Join(modes, ", ") + ")"
		} else if len(c.Modes) == 1 && c.Modes[0] == proto.ModeSelf {
			reach = "self"
		}
		fmt.Fprintf(w, "  %-*s  %-10s  %s\n", width, c.Name, c.Capability, reach)
	}
	fmt.Fprintf(w, "%d commands; %d clusters, every contract digest-verified\n", len(d.Commands), len(desc.Clusters))
}

// Invoked prints a call's reply: {responder, data} on one line for
// --json, else its data as indented JSON, or that the command ran.
func Invoked(w io.Writer, command string, res *ep.Result, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(map[string]any{"responder": res.Responder, "data": res.Data})
		fmt.Fprintln(w, string(b))
		return
	}
	if len(res.Data) == 0 {
		fmt.Fprintf(w, "✓ %s ran on %s (epoch %d)\n", command, res.Responder.InstanceID, res.Responder.Epoch)
		return
	}
	var v any
	_ = json.Unmarshal(res.Data, &v)
	JSON(w, v)
}

// Deregistered prints what deregister-instance did: refused (r non-nil,
// its reason on errw) or done.
func Deregistered(w, errw io.Writer, endpoint, instance string, r *ep.DeregisterRefusal, asJSON bool) {
	switch {
	case r != nil && asJSON:
		JSON(w, map[string]any{"endpoint": endpoint, "instance": instance, "deregistered": false, "reason": r.Reason, "detail": r.Detail})
		fmt.Fprintf(errw, "✗ %s: %s\n", r.Reason, r.Detail)
	case r != nil:
		fmt.Fprintf(errw, "✗ %s: %s\n", r.Reason, r.Detail)
	case asJSON:
		JSON(w, map[string]any{"endpoint": endpoint, "instance": instance, "deregistered": true})
	default:
		fmt.Fprintf(w, "✓ deregistered %s instance %s\n", endpoint, instance)
	}
}

// Refusal prints a control-surface refusal the way a person reads it:
// its code and message, and whether the command ran.
func Refusal(w io.Writer, e *proto.Error) {
	fmt.Fprintf(w, "✗ %s: %s\n", e.Code, e.Message)
	switch e.EffectiveOutcome() {
	case proto.NotExecuted:
		if !strings.Contains(e.Message, "did not run") {
			fmt.Fprintln(w, "  (the command did not run)")
		}
	case proto.Unknown:
		fmt.Fprintln(w, "  (it is unknown whether the command ran)")
	}
}
