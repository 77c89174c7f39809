package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

const joinHelp = `type a line to post it to the current channel, or:
  /dm <name> <text>     direct message
  /ask <role> <text>    task for any one holder of a role
  /to <channel>         change the current channel
  /join <channel>       join a channel     /leave <channel>   leave one
  /status <idle|waiting|working> [activity]
  /who                  the roster          /quit              leave the mesh`

func newJoinCmd(g *globals) *cobra.Command {
	var (
		name, role string
		channels   []string
	)
	cmd := &cobra.Command{
		Use:   "join --name N [--role R] [--channel C]...",
		Short: "Be on the mesh from this terminal: arrivals print as they come, typed lines are sent",
		Long: `Join the mesh as a person at a terminal. Arrivals (DMs, tasks for your
role, posts on your channels) print as they come and are acknowledged once
printed. Typed lines are sent.

In the default mode the name gets its own credential, minted for it with read
and post rights on every channel (or use --creds). It shows on the roster
until you leave.

` + joinHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.inSeat() != "" {
				return seatJoin(g, channels)
			}
			if g.creds == "" && !wire.ValidToken(name) {
				return usagef("--name %q must be one token of A-Z a-z 0-9 _ (no . * > - or spaces)", name)
			}
			for _, ch := range channels {
				if err := wire.ValidateChannel(ch); err != nil {
					return usageError{err}
				}
			}
			ctx, stop := untilQuit(cmd.Context(), nil)
			defer stop()
			opts := mesh.Options{Role: role, Subscribe: channels, Name: name}
			if g.creds == "" {
				creds, err := g.mintForJoin(ctx, name, role, channels)
				if err != nil {
					return err
				}
				if creds != "" {
					g.creds = creds
				}
			}
			if g.creds != "" {
				opts.Name = ""
			}
			log := newHeldLog(g.stderr)
			opts.Logf = log.logf
			e, err := g.endpoint(ctx, opts)
			if err != nil {
				return err
			}
			defer e.Close()
			log.watch(func() bool { return e.Conn().Status() == nats.CONNECTED })
			err = joinLoop(ctx, g, e, lostMesh(ctx, g, e.Conn()))
			if errors.As(err, new(meshLostError)) {
				// What the endpoint says while it lets go of a mesh that
				// is gone is noise: the person was told in words.
				log.drop()
				e.Conn().Close()
			}
			return err
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "your name on the mesh (required unless --creds)")
	cmd.Flags().StringVar(&role, "role", "", "a role whose tasks you take")
	cmd.Flags().StringSliceVar(&channels, "channel", nil, "channel to join (repeatable); the first is where plain lines go")
	return cmd
}

// mintForJoin mints the person's credential on an authenticated mesh; on
// an open one it returns "" (no credential needed).
func (g *globals) mintForJoin(ctx context.Context, name, role string, channels []string) (string, error) {
	t, err := g.resolveTarget()
	if err != nil {
		return "", err
	}
	if t.record.Mode == config.ModeOpen {
		return "", nil
	}
	if channels == nil {
		channels = []string{}
	}
	id := broker.Identity{
		Space: t.paths.Space, Principal: wire.Principal{Owner: "local", Actor: name}, Role: role,
		Subscribe: channels, AllowSubscribe: []string{">"}, AllowPublish: []string{">"},
	}
	nc, err := t.connect("cotal join")
	if err != nil {
		return "", err
	}
	defer nc.Close()
	c, _, err := issue.Mint(ctx, t.paths, id, nc)
	if errors.Is(err, issue.ErrReservedName) {
		return "", usageError{err}
	}
	if err != nil {
		return "", err
	}
	if err := config.EnsureDir(t.paths.CredsDir(), 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(t.paths.CredsDir(), name+".creds")
	return path, broker.WriteCreds(path, c)
}

// meshLostError ends a join whose mesh went away; it says so in words.
type meshLostError struct{ error }

// joinLoop prints arrivals and sends typed lines until EOF, /quit, a
// signal, or the mesh is lost (a meshLostError).
func joinLoop(ctx context.Context, g *globals, e *mesh.Endpoint, lost <-chan error) error {
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(g.stdout, format+"\n", args...)
	}
	current, _ := e.DefaultChannel()
	say("joined space %s as %s (lifecycle %s); channels: %s", e.Space(), e.Me(), e.LifecycleUID(), strings.Join(e.Channels(), ", "))
	for _, r := range e.BootJoins() {
		say("%s", mesh.JoinSummary(r))
	}
	say("%s", joinHelp)

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
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			say("leaving")
			return nil
		case err := <-lost:
			return meshLostError{err}
		case line, ok = <-lines:
			if !ok {
				return nil
			}
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		cmd, rest, _ := strings.Cut(line, " ")
		arg, text, _ := strings.Cut(strings.TrimSpace(rest), " ")
		var err error
		switch {
		case !strings.HasPrefix(line, "/"):
			var r mesh.Receipt
			if r, err = e.Send(ctx, current, line); err == nil {
				say("-> #%s: %s", r.Channel, r)
			}
		case cmd == "/quit":
			return nil
		case cmd == "/dm":
			var r mesh.Receipt
			if r, err = e.DM(ctx, arg, text); err == nil {
				say("-> DM %s: %s", r.ToName, r)
			}
		case cmd == "/ask":
			var r mesh.Receipt
			if r, err = e.Ask(ctx, arg, text); err == nil {
				say("-> @%s: %s", r.ToService, r)
			}
		case cmd == "/to":
			if err = wire.ValidateConcreteChannel(arg); err == nil {
				current = arg
				say("posting to #%s", current)
			}
		case cmd == "/join":
			var r mesh.JoinResult
			if r, err = e.Join(ctx, arg); err == nil {
				if !r.Joined {
					say("already on #%s", arg)
				} else {
					say("%s", mesh.JoinSummary(r))
				}
				if current == "" && wire.IsConcrete(arg) {
					current = arg
				}
			}
		case cmd == "/leave":
			var left bool
			if left, err = e.Leave(ctx, arg); err == nil {
				say("%s", map[bool]string{true: "left #" + arg, false: "you weren't on #" + arg}[left])
				if current == arg {
					current, _ = e.DefaultChannel()
				}
			}
		case cmd == "/status":
			var st presence.Status
			if st, err = presence.ParseStatus(arg); err == nil {
				err = e.SetStatus(st, text)
			}
		case cmd == "/who":
			peers, view, rerr := e.Roster(ctx)
			if err = rerr; err == nil {
				say("%s", strings.TrimRight(render.Roster(peers, view, timeNow()), "\n"))
			}
		default:
			err = errors.New("unknown command " + cmd + "; " + joinHelp)
		}
		if err != nil {
			say("error: %v", err)
		}
	}
}
