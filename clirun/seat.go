package clirun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/internal/quit"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/pty"
)

// The commands on the managers' seats: their census, a spawn followed to
// its outcome, and the calls on one seat (its screen, typing into it, an
// answer to what it waits on, an attach), and a seat's own hook.

// Census asks every manager (or only on) for its seats at once.
func Census(c Caller, on string) (*client.Census, error) {
	cl, nc, err := c.Managers()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cs, err := cl.Census(ctx, on)
	return cs, Refused(err)
}

// localManager is the manager a spawn goes to when it names none: on a
// mesh other hosts share, the one this machine runs; else any ("").
func (c Caller) localManager() string {
	if c.AsAgent != nil && c.AsAgent() {
		return ""
	}
	_, p, _, err := c.Paths()
	if err != nil {
		return ""
	}
	return host.LocalManager(p)
}

// Spawning is a spawn as its command asks for it.
type Spawning struct {
	client.SpawnArgs
	On        string        // the manager; "" is this machine's on a shared mesh, else any
	Detach    bool          // end at the acceptance
	FollowFor time.Duration // how long past the readiness bound to wait for the outcome
	// Accepted is told the acceptance; Watch is what follows the spawn.
	Accepted func(client.Spawned)
	Watch    func(client.Spawned) client.Watch
}

// Spawn asks a manager to start a seat and, unless detached, follows it
// to its outcome. A refusal of what was asked (no such persona, a name a
// live seat has) is bad input.
func Spawn(c Caller, s Spawning) (client.Spawned, ep.GoalResult, error) {
	if err := s.CheckName(); err != nil {
		return client.Spawned{}, ep.GoalResult{}, bad(err)
	}
	cl, nc, err := c.Managers()
	if err != nil {
		return client.Spawned{}, ep.GoalResult{}, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if s.On == "" {
		s.On = c.localManager()
	}
	sp, err := cl.Spawn(ctx, s.SpawnArgs, s.On)
	var refused *client.SpawnRefusal
	if err = client.RefusedSpawn(s.Persona, err); errors.As(err, &refused) && refused.Input {
		return sp, ep.GoalResult{}, bad(err)
	} else if err != nil {
		return sp, ep.GoalResult{}, err
	}
	if s.Accepted(sp); s.Detach {
		return sp, ep.GoalResult{}, nil
	}
	wait := sp.Deadline() + s.FollowFor
	fctx, fcancel := context.WithTimeout(context.Background(), wait)
	defer fcancel()
	res, err := cl.AwaitSpawn(fctx, sp, s.Watch(sp))
	if err != nil {
		return sp, res, fmt.Errorf("spawn of %s: no outcome within %s; see `cotal ps` and `cotal screen %s`", sp.Name, wait, sp.Name)
	}
	return sp, res, nil
}

// Located finds a seat over the managers (or only on), on a client that
// dials again after the mesh went away; a name no manager has is bad
// input.
func (c Caller) Located(name, on string) (*client.Redialer, client.CensusRow, error) {
	d := c.Redialer()
	cl, err := d.Client()
	if err == nil {
		var row client.CensusRow
		if row, err = Locate(cl, name, on); err == nil {
			return d, row, nil
		}
	}
	d.Close()
	return nil, client.CensusRow{}, Refused(err)
}

// FollowScreen shows the seat's screen each time it changes, asking
// every so often, until ctx ends or the seat is gone (gone, and no
// error).
func FollowScreen(ctx context.Context, c Caller, name, on string, every time.Duration, show func(client.ScreenReply), failed func(error)) (gone bool, err error) {
	if err := client.CheckFollowEvery(every); err != nil {
		return false, bad(err)
	}
	d, row, err := c.Located(name, on)
	if err != nil {
		return false, err
	}
	defer d.Close()
	err = d.FollowScreen(ctx, row.Seat(), every, show, failed)
	if errors.Is(err, client.ErrSeatGone) {
		return true, nil
	}
	return false, err
}

// Type types words into a seat: as one paste, then Enter when enter is
// set, or as the named keys. Text a seat would refuse, or a key name that
// does not exist, is bad input and nothing is typed.
func Type(c Caller, name, on string, words []string, keys, enter bool) (r client.InputReply, err error) {
	text := strings.Join(words, " ")
	if err := client.CheckTyped(text, words, keys, enter); err != nil {
		return r, bad(err)
	}
	if keys {
		if _, err := pty.ParseKeys(words...); err != nil {
			return r, usagef("%v; nothing was typed", err) // a misspelt key is never sent
		}
	}
	err = c.OnSeat(name, on, func(ctx context.Context, cl *client.Client, s client.Seat) (err error) {
		if keys {
			r, err = cl.Keys(ctx, s, words...)
		} else {
			r, err = cl.Input(ctx, s, text, enter)
		}
		return err
	})
	return r, Refused(err)
}

// Answer answers the permission prompt a seat waits on (decision
// client.AnswerAllow or AnswerDeny, a deny's reason in words) through the
// hook that holds it.
func Answer(c Caller, name, on, decision string, words []string) (r client.AnswerReply, err error) {
	message, err := client.AnswerMessage(decision, words)
	if err != nil {
		return r, bad(err)
	}
	err = c.OnSeat(name, on, func(ctx context.Context, cl *client.Client, s client.Seat) (err error) {
		r, err = cl.Answer(ctx, s, decision, message)
		return err
	})
	return r, Refused(err)
}

// Attach joins the person's terminal to a seat's (o names it; the detach
// key is the environment's) until it ends, and says how it ended.
func Attach(ctx context.Context, c Caller, on string, o tty.Options) (tty.Ending, error) {
	key, err := tty.ParseDetachKey(os.Getenv(tty.DetachKeyEnv))
	if err != nil {
		return tty.Failed, bad(err)
	}
	o.DetachKey = key
	d, row, err := c.Located(o.Name, on)
	if err != nil {
		return tty.Failed, err
	}
	defer d.Close()
	end, err := tty.RunSeat(ctx, o, d.Client, row)
	if end == tty.Failed && !errors.Is(err, tty.ErrGone) {
		err = Refused(err)
	}
	return end, err
}

// AsSeat runs fn as this process's seat, through the manager hosting it,
// until fn ends or the harness stops the hook (a quit signal once it
// reached the mesh: a permission prompt answered at the terminal).
func AsSeat(ctx context.Context, c Caller, fn func(context.Context, client.Self) error) error {
	if c.InSeat() == "" {
		return fmt.Errorf("not inside a seat (no COTAL_MANAGER_INSTANCE and COTAL_CREDS): nothing to do")
	}
	if _, err := cliargs.LoadCreds(c.Creds, "COTAL_CREDS"); err != nil {
		return err
	}
	cl, nc, err := c.Managers()
	if err != nil {
		return fmt.Errorf("reaching the mesh: %v", err)
	}
	defer nc.Close()
	ctx, stop := quit.Until(ctx, nil)
	defer stop()
	return fn(ctx, cl.Self(c.InSeat()))
}

// Screen is a seat's current screen.
func Screen(c Caller, name, on string) (r client.ScreenReply, err error) {
	err = c.OnSeat(name, on, func(ctx context.Context, cl *client.Client, s client.Seat) (err error) {
		r, err = cl.Screen(ctx, s)
		return err
	})
	return r, Refused(err)
}

// ScreenUntil waits, at the seat's manager, for its screen to show text
// (at most wait): the reply says whether it did.
func ScreenUntil(c Caller, name, on, text string, wait time.Duration) (r client.ScreenReply, err error) {
	if err := client.CheckScreenUntil(text, wait); err != nil {
		return r, bad(err)
	}
	err = c.onSeatWithin(name, on, wait+Timeout, func(ctx context.Context, cl *client.Client, s client.Seat) (err error) {
		r, err = cl.ScreenUntil(ctx, s, text, wait)
		return err
	})
	return r, Refused(err)
}

// Stop stops a seat, gracefully (SIGTERM, then SIGKILL after 3 s) or at
// once, and is its row as it stopped.
func Stop(c Caller, name, on string, graceful bool) (r client.Row, err error) {
	err = c.OnSeat(name, on, func(ctx context.Context, cl *client.Client, s client.Seat) (err error) {
		r, err = cl.Stop(ctx, s, graceful)
		return err
	})
	return r, Refused(err)
}
