package clirender

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/client"
)

// Screen prints a seat's screen: as JSON (one line each with oneLine, as
// --follow prints them) or as its text, saying on errw when it is the
// last screen of a seat that exited.
func Screen(w, errw io.Writer, r client.ScreenReply, asJSON, oneLine bool) {
	switch {
	case asJSON && oneLine:
		b, _ := json.Marshal(r)
		fmt.Fprintln(w, string(b))
	case asJSON:
		JSON(w, r)
	default:
		fmt.Fprintln(w, r.Screen)
	}
	if !r.Running && !asJSON {
		fmt.Fprintf(errw, "(%s has exited; this is its last screen)\n", r.Name)
	}
}

// Stopped prints a stopped seat: its row as JSON, or how it ended.
func Stopped(w io.Writer, r client.Row, graceful, asJSON bool) {
	if asJSON {
		JSON(w, struct {
			client.Row
			Ended string `json:"ended"`
		}{r, HowEnded(r.Process, graceful)})
		return
	}
	fmt.Fprintf(w, "stopped %s: %s; it is offline\n", r.Name, HowEnded(r.Process, graceful))
}

// HowEnded says how a stopped seat's process ended, from its ps process
// column.
func HowEnded(process string, graceful bool) string {
	switch {
	case process == "killed SIGTERM":
		return "it ended on SIGTERM"
	case process == "killed SIGHUP":
		return "it ended on SIGHUP (it ignores SIGTERM, as an interactive shell does, so it was hung up instead)"
	case process == "killed SIGKILL" && graceful:
		return "it did not end within 3 s of its stop signal and was killed (SIGKILL)"
	case process == "killed SIGKILL":
		return "killed at once (SIGKILL)"
	case strings.HasPrefix(process, "exited "):
		return "it exited with status " + strings.TrimPrefix(process, "exited ")
	}
	return process
}

// Deliveries prints `cotal deliveries`: a row per identity and seat with
// what waits for it (pending: only those with something waiting).
func Deliveries(w io.Writer, rows []host.Delivery, pending bool) {
	if len(rows) == 0 {
		if pending {
			fmt.Fprintln(w, "Nothing waits: every DM, task and stored mention has been settled.")
		} else {
			fmt.Fprintln(w, "No identity has an inbox on this mesh yet.")
		}
		return
	}
	now := time.Now()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSEAT\tPRESENCE\tSTORED\tTAKEN\tOLDEST\tWHY")
	for _, r := range rows {
		oldest := "-"
		if !r.Oldest.IsZero() {
			oldest = render.Age(now, r.Oldest)
		}
		why := r.Why
		if why == "" && r.Stored+r.Taken == 0 {
			why = "nothing waits"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.Name, Dash(r.Seat), r.Presence, r.Stored, r.Taken, oldest, Dash(why))
	}
	_ = tw.Flush()
}

// Meshes prints `cotal meshes`: every known space, def the `cotal use`
// default.
func Meshes(w io.Writer, rows []host.Mesh, def string) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no spaces yet; `cotal up` starts one")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SPACE\tSTATE\tURL\tPID\tMODE\tFOLDER\tSTORE")
	for _, r := range rows {
		name := r.Space
		if r.Default {
			name += " *"
		}
		pid := "-"
		if r.PID != 0 {
			pid = fmt.Sprint(r.PID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, r.State, Dash(r.URL), pid, Dash(r.Mode), Dash(r.Folder), r.StoreDir)
	}
	tw.Flush()
	if def != "" {
		fmt.Fprintln(w, "* the `cotal use` default")
	}
}

// AttachEnd says on w how an attach to the seat name ended, and reports
// whether that is a failure (exit 1); a tty.Failed end is the caller's to
// say, with its error.
func AttachEnd(w io.Writer, end tty.Ending, name string) (failed bool) {
	switch end {
	case tty.Detached:
		fmt.Fprintf(w, "\n[cotal: detached from %s; it runs on]\n", name)
	case tty.Exited:
		fmt.Fprintf(w, "\n[cotal: %s exited]\n", name)
	case tty.Gone:
		fmt.Fprintf(w, "\nseat %s is gone\n", name)
	case tty.Lost:
		fmt.Fprintf(w, "\n[cotal: connection lost; attach again with `cotal attach %s`]\n", name)
		return true
	case tty.Restarted:
		fmt.Fprintf(w, "\n[cotal: manager restarted; re-attach with `cotal attach %s`]\n", name)
		return true
	case tty.Expired:
		fmt.Fprintf(w, "\n[cotal: the session's grant expired; attach again with `cotal attach %s`]\n", name)
		return true
	case tty.Cancelled:
		fmt.Fprintf(w, "\n[cotal: attach to %s ended by a signal; it runs on]\n", name)
		return true
	}
	return false
}

// StatusSet prints what set-status left on the roster.
func StatusSet(w io.Writer, r client.StatusSet, asJSON bool) {
	if asJSON {
		JSON(w, r)
		return
	}
	fmt.Fprintf(w, "status %v, activity %q\n", r.Status, r.Activity)
}

// Left prints what leave did to the channel.
func Left(w io.Writer, channel string, left, asJSON bool) {
	switch {
	case asJSON:
		JSON(w, map[string]any{"channel": channel, "left": left})
	case left:
		fmt.Fprintf(w, "left #%s\n", channel)
	default:
		fmt.Fprintf(w, "you weren't on #%s\n", channel)
	}
}

// ScreenFollower is how screen --follow prints: each changed screen
// (clearing the last on a terminal, else under a line naming the seat and
// the time), and on errw each ask that failed.
func ScreenFollower(w, errw io.Writer, name string, asJSON bool) (show func(client.ScreenReply), failed func(error)) {
	f, ok := w.(*os.File)
	onTerm := ok && term.IsTerminal(f.Fd())
	return func(r client.ScreenReply) {
			switch {
			case asJSON:
			case onTerm:
				fmt.Fprint(w, "\x1b[H\x1b[2J")
			default:
				fmt.Fprintf(w, "--- %s %s ---\n", name, time.Now().Format("15:04:05.000"))
			}
			Screen(w, errw, r, asJSON, true)
		}, func(err error) {
			fmt.Fprintf(errw, "(%s: %s; asking again)\n", name, err)
		}
}

// Typed prints what an input or keys typed into a seat.
func Typed(w io.Writer, r client.InputReply, asJSON bool) {
	if asJSON {
		JSON(w, r)
		return
	}
	fmt.Fprintf(w, "sent %d bytes to %s\n", r.Bytes, r.Name)
}

// Answered prints an approve's or a deny's answer.
func Answered(w io.Writer, r client.AnswerReply, asJSON bool) {
	if asJSON {
		JSON(w, r)
		return
	}
	verb := "approved"
	if r.Decision == client.AnswerDeny {
		verb = "denied"
	}
	fmt.Fprintf(w, "%s %s: %s\n", verb, r.Name, r.Asked)
}
