package clirender

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// AgeMs is the age of a manager's time t read against its clock now.
func AgeMs(nowMs, t int64) string {
	if t == 0 {
		return "-"
	}
	return render.Age(time.UnixMilli(nowMs), time.UnixMilli(t))
}

// Census prints `cotal ps`: a row per seat, then what the table cannot
// say, one kind of note after another (rowNotes add their own after the
// waiting note of each row); on errw, each manager that did not answer.
func Census(w, errw io.Writer, cs *client.Census, wide bool, rowNotes ...func(note func(string, ...any), r client.CensusRow)) {
	defer func() {
		for _, m := range cs.Missing {
			fmt.Fprintf(errw, "manager %s did not answer (%s): census incomplete\n", m.InstanceID, OrDefault(string(m.Liveness), "no answer"))
		}
		for _, m := range cs.Failed {
			fmt.Fprintf(errw, "manager %s answered with an error (%s): census incomplete\n", m.InstanceID, m.Error)
		}
	}()
	if len(cs.Rows) == 0 {
		fmt.Fprintf(w, "no seats (%d manager(s) answered)\n", len(cs.Managers))
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "NAME\tPROCESS\tFOR\tMESH\tFOR\tPID\tROLE\tPERSONA\tTYPED-IN\tOUTPUT\tSANDBOX\tMANAGER"
	if wide {
		head += "\tID\tUID\tGOAL\tSESSION"
	}
	fmt.Fprintln(tw, head)
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }
	for _, r := range cs.Rows {
		since, process, mesh, typed := r.StartedMs, r.Process, r.Mesh, "no"
		if r.ExitedMs != 0 {
			since = r.ExitedMs
		}
		if r.Running() && r.SuspendedMs != 0 {
			process = client.ProcessSuspended
		}
		if r.Running() && r.Mesh == "offline" {
			mesh += " (" + r.State + ")"
		}
		if r.Injects {
			typed = "yes"
		}
		sandbox, _, _ := strings.Cut(r.Sandbox, ":")
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s", r.Name, process, AgeMs(r.ManagerNowMs, since),
			mesh, AgeMs(r.ManagerNowMs, r.MeshSinceMs), r.PID, Dash(r.Role), r.Persona, typed, AgeMs(r.ManagerNowMs, r.LastOutputMs),
			Dash(sandbox), r.Manager)
		if wide {
			line += fmt.Sprintf("\t%s\t%s\t%s\t%s", r.ID, r.LifecycleUID, r.GoalID, Dash(r.Session))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	// What the table cannot say, one kind of note after another.
	for _, r := range cs.Rows {
		if strings.HasPrefix(r.Sandbox, "unsandboxed") && r.Running() {
			note("%s is %s", r.Name, r.Sandbox)
		}
		if r.Nested != "" && r.Running() {
			note("%s: %s", r.Name, r.Nested)
		}
	}
	for _, r := range cs.Rows {
		if r.Running() && r.SuspendedMs != 0 {
			note("%s is stopped by a signal (SIGSTOP or ^Z), for %s: it runs nothing until continued (kill -CONT %d)", r.Name, AgeMs(r.ManagerNowMs, r.SuspendedMs), r.PID)
		}
	}
	for _, r := range cs.Rows {
		if line := custodyNote(r); line != "" {
			note("%s", line)
		}
	}
	for _, r := range cs.Rows {
		if !r.Injects && r.Running() {
			note("%s gets no messages typed in: it reads them with `cotal inbox` (a command seat's persona turns typing on with inject: true)", r.Name)
		}
	}
	for _, r := range cs.Rows {
		waitingNote(note, r)
		for _, more := range rowNotes {
			more(note, r)
		}
	}
	for _, r := range cs.Rows {
		if a := r.Agent; a != nil && a.State == client.AgentWaiting && r.Running() {
			how := fmt.Sprintf("attach to answer: cotal attach %s", r.Name)
			if a.Answerable {
				how = fmt.Sprintf("cotal approve %s / cotal deny %s", r.Name, r.Name)
			}
			note("%s: %s %s (waiting on you; %s)", r.Name, OrDefault(wire.CleanLabel(a.Asks), "waiting for input"), AgeMs(r.ManagerNowMs, a.SinceMs), how)
		}
	}
	for _, r := range cs.Rows {
		for _, a := range r.Sessions {
			note("%s: attached by %s for %s (session %s, %s out, %s dropped)", r.Name, a.Holder,
				AgeMs(r.ManagerNowMs, a.SinceMs), a.ID, render.Bytes(a.BytesOut), render.Bytes(a.Dropped))
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}

// custodyNote says what became of a seat across a restart of its
// manager: taken back from its keeper, lost, ended while no manager held
// it, or resumed; "" for none of these.
func custodyNote(r client.CensusRow) string {
	switch {
	case r.LostMs != 0:
		return fmt.Sprintf("%s: lost %s ago: %s", r.Name, AgeMs(r.ManagerNowMs, r.LostMs), r.Lost)
	case r.EndedAway:
		return fmt.Sprintf("%s: ended while no manager held it (%s, %s ago)", r.Name, r.Process, AgeMs(r.ManagerNowMs, r.ExitedMs))
	case r.ReattachedMs != 0 && r.Running():
		line := fmt.Sprintf("%s: reattached %s ago, taken back from its keeper", r.Name, AgeMs(r.ManagerNowMs, r.ReattachedMs))
		if r.DetachedKept > 0 || r.DetachedDropped > 0 {
			line += fmt.Sprintf("; while no manager held it, it wrote %s: the last %s kept, %s dropped",
				render.Bytes(r.DetachedKept+r.DetachedDropped), render.Bytes(r.DetachedKept), render.Bytes(r.DetachedDropped))
		}
		return line
	case r.ResumedMs != 0 && r.Running():
		if r.ResumedFrom == "" {
			return fmt.Sprintf("%s: resumed %s ago (its harness keeps no session: it started afresh under the same identity)", r.Name, AgeMs(r.ManagerNowMs, r.ResumedMs))
		}
		return fmt.Sprintf("%s: resumed %s ago from session %s", r.Name, AgeMs(r.ManagerNowMs, r.ResumedMs), r.ResumedFrom)
	}
	return ""
}

// waitingNote says what waits at a seat's connector and why, when
// anything does.
func waitingNote(note func(string, ...any), r client.CensusRow) {
	waiting, oldest := render.Plural(r.Waiting, "message"), AgeMs(r.ManagerNowMs, r.OldestWaitingMs)
	switch {
	case r.Held != "" && r.Waiting > 0:
		note("%s: held: %s; %s waiting, the oldest for %s", r.Name, r.Held, waiting, oldest)
	case r.Held != "":
		note("%s: held: %s", r.Name, r.Held)
	case r.Waiting == 0:
	case r.PullOnly == r.Waiting:
		note("%s: %s left for its inbox read", r.Name, waiting)
	case !r.Injects:
		note("%s: %s waiting; it reads its inbox itself", r.Name, waiting)
	default:
		note("%s: %s waiting, the oldest for %s", r.Name, waiting, oldest)
	}
}
