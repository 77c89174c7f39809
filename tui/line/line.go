// Package line is a person on the mesh from a plain terminal (`cotal
// join`): arrivals print as they come and are acknowledged once printed,
// typed lines are sent, slash commands join, leave, DM, ask and show the
// roster. The endpoint's own log is held back and dropped once the mesh
// is gone, so the person is told that in words rather than shown the
// errors it left. It imports the mesh packages only.
package line

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Help is what a joined terminal may type.
const Help = `type a line to post it to the current channel, or:
  /dm <name> <text>     direct message
  /ask <role> <text>    task for any one holder of a role
  /to <channel>         change the current channel
  /join <channel>       join a channel     /leave <channel>   leave one
  /status <idle|waiting|working> [activity]
  /who                  the roster          /quit              leave the mesh`

// MeshLostError ends a terminal whose mesh went away; it says so in words.
type MeshLostError struct{ Err error }

func (e MeshLostError) Error() string { return e.Err.Error() }
func (e MeshLostError) Unwrap() error { return e.Err }

// Run prints arrivals and sends typed lines until in ends, /quit, ctx
// ends, or the mesh is lost (a MeshLostError from lost).
func Run(ctx context.Context, e *mesh.Endpoint, in io.Reader, out io.Writer, lost <-chan error) error {
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	current, _ := e.DefaultChannel()
	say("joined space %s as %s (lifecycle %s); channels: %s", e.Space(), e.Me(), e.LifecycleUID(), strings.Join(e.Channels(), ", "))
	for _, r := range e.BootJoins() {
		say("%s", mesh.JoinSummary(r))
	}
	say("%s", Help)

	go func() {
		for {
			it, err := e.Next(ctx)
			if err != nil {
				return
			}
			say("%s", render.Item(it.Kind, it.Subject, it.Msg, it.Historical, e.Me()))
			if err := it.Ack(); err != nil {
				say("(ack failed, it will come again: %v)", err)
			}
		}
	}()

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for {
		var text string
		var ok bool
		select {
		case <-ctx.Done():
			say("leaving")
			return nil
		case err := <-lost:
			return MeshLostError{err}
		case text, ok = <-lines:
			if !ok {
				return nil
			}
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if text == "/quit" || strings.HasPrefix(text, "/quit ") {
			return nil
		}
		if err := do(ctx, e, text, &current, say); err != nil {
			say("error: %v", err)
		}
	}
}

// do runs one typed line.
func do(ctx context.Context, e *mesh.Endpoint, text string, current *string, say func(string, ...any)) error {
	cmd, rest, _ := strings.Cut(text, " ")
	arg, body, _ := strings.Cut(strings.TrimSpace(rest), " ")
	switch {
	case !strings.HasPrefix(text, "/"):
		r, err := e.Send(ctx, *current, text)
		if err == nil {
			say("-> #%s: %s", r.Channel, r)
		}
		return err
	case cmd == "/dm":
		r, err := e.DM(ctx, arg, body)
		if err == nil {
			say("-> DM %s: %s", r.ToName, r)
		}
		return err
	case cmd == "/ask":
		r, err := e.Ask(ctx, arg, body)
		if err == nil {
			say("-> @%s: %s", r.ToService, r)
		}
		return err
	case cmd == "/to":
		if err := wire.ValidateConcreteChannel(arg); err != nil {
			return err
		}
		*current = arg
		say("posting to #%s", arg)
	case cmd == "/join":
		r, err := e.Join(ctx, arg)
		if err != nil {
			return err
		}
		if !r.Joined {
			say("already on #%s", arg)
		} else {
			say("%s", mesh.JoinSummary(r))
		}
		if *current == "" && wire.IsConcrete(arg) {
			*current = arg
		}
	case cmd == "/leave":
		left, err := e.Leave(ctx, arg)
		if err != nil {
			return err
		}
		if left {
			say("left #%s", arg)
		} else {
			say("you weren't on #%s", arg)
		}
		if *current == arg {
			*current, _ = e.DefaultChannel()
		}
	case cmd == "/status":
		st, err := presence.ParseStatus(arg)
		if err != nil {
			return err
		}
		return e.SetStatus(st, body)
	case cmd == "/who":
		peers, view, err := e.Roster(ctx)
		if err != nil {
			return err
		}
		say("%s", strings.TrimRight(render.Roster(peers, view, time.Now()), "\n"))
	default:
		return errors.New("unknown command " + cmd + "; " + Help)
	}
	return nil
}
