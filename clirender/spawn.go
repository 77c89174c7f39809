package clirender

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// SpawnResult prints how a spawn's goal ended and reports whether the
// seat came up.
func SpawnResult(w io.Writer, acc client.SpawnAccepted, res ep.GoalResult, asJSON bool) (ready bool) {
	switch {
	case asJSON:
		JSON(w, map[string]any{"accepted": acc, "result": res})
	case res.State == ep.GoalSucceeded:
		fmt.Fprintf(w, "ready: %s is up and on the mesh\n", acc.Name)
	case res.State == ep.GoalUncertain:
		why := fmt.Sprintf("%s did not show it was up within the bound", acc.Name)
		var d ep.Uncertain
		if json.Unmarshal(res.Data, &d) == nil && d.Reason != "" {
			why = wire.CleanLabel(d.Reason)
		}
		fmt.Fprintf(w, "uncertain: %s; it is kept running: inspect it with `cotal screen %s` and `cotal ps` rather than spawning it again\n", why, acc.Name)
	default:
		msg := ""
		if res.Error != nil {
			msg = res.Error.Message
		}
		fmt.Fprintf(w, "%s: %s\n", res.State, msg)
	}
	return res.State == ep.GoalSucceeded
}

// Step is a spawn progress event in words.
func Step(s client.Step) string {
	switch s.Step {
	case client.StepLaunched:
		return fmt.Sprintf("process launched (pid %d)", s.PID)
	case client.StepReady:
		return "drew its first output and kept running: joining the mesh"
	case "":
		return s.State
	}
	return s.Step
}

// Accepted prints a spawn the manager accepted: a line, or for --detach
// --json the acceptance as the manager sent it; a followed spawn in JSON
// prints nothing yet.
func Accepted(w io.Writer, sp client.Spawned, detach, asJSON bool) {
	switch {
	case !asJSON:
		fmt.Fprintf(w, "accepted: seat %s (%s.%s, lifecycle %s) on manager %s; goal %s\n", sp.Name, sp.Owner, sp.Actor, sp.UID, sp.Manager, sp.GoalID)
	case detach:
		fmt.Fprintln(w, string(sp.Reply))
	}
}

// SpawnWatch is what a followed spawn prints as it goes: each step, and
// on errw that it waits; nothing in JSON.
func SpawnWatch(w, errw io.Writer, sp client.Spawned, asJSON bool) client.Watch {
	if asJSON {
		return client.Watch{}
	}
	return client.Watch{
		Step:    func(s client.Step) { fmt.Fprintf(w, "%s: %s\n", sp.Name, Step(s)) },
		Pending: func() { fmt.Fprintf(errw, "waiting for %s to come up (at most %s)...\n", sp.Name, sp.Deadline()) },
	}
}
