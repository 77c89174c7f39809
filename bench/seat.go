package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	cpty "github.com/creack/pty"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/pty"
)

func seatPaths() []path {
	return []path{
		{name: "pty start to first output", base: "creack/pty start to first byte", goal: "within 1.2x", limit: 1.2, run: startPath},
		{name: "spawn to ready (command seat)", base: "pty start to first output", goal: "under 100 ms", absolute: 100 * time.Millisecond, run: spawnPath},
		{name: "seat input to screen", base: "pty paste to screen", goal: "within 2x", limit: 2, run: inputPath},
		{name: "dm to the seat's pty", base: "raw hand-over + pty write", goal: "within 2x", limit: 2, run: injectPath(false)},
		{name: "publish to injected", base: "raw hand-over to pty write done", goal: "within 2x", limit: 2, run: injectPath(true)},
	}
}

// persona writes a command persona into the bench project.
func (e *env) persona(name, command string, args []string, env map[string]string, inject bool) error {
	q := func(v any) string { s, _ := json.Marshal(v); return string(s) } // JSON is YAML flow
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\nagent: command\ncommand: %s\n", name, q(command))
	if args != nil {
		fmt.Fprintf(&b, "args: %s\n", q(args))
	}
	if env != nil {
		fmt.Fprintf(&b, "env: %s\n", q(env))
	}
	if inject {
		b.WriteString("inject: true\n")
	}
	b.WriteString("---\n")
	return os.WriteFile(filepath.Join(config.AgentsDir(e.project), name+".md"), []byte(b.String()), 0o600)
}

// spawn asks the manager for a seat of persona and waits for its goal's
// outcome; it returns the seat, stopped again after the path.
func (e *env) spawn(ctx context.Context, persona string) (client.Seat, error) {
	sctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	sp, err := e.mgr.Spawn(sctx, client.SpawnArgs{Persona: persona}, e.iid)
	if err != nil {
		return client.Seat{}, err
	}
	// Addressed by its lifecycle, as a client that has the seat's row
	// does: a call by name alone first asks the manager which lifecycle.
	seat := client.Seat{Name: sp.Name, Manager: e.iid, Owner: sp.Owner, UID: sp.UID, Any: true}
	e.defer_(func() { _, _ = e.mgr.Stop(context.WithoutCancel(ctx), seat, false) })
	res, err := e.mgr.AwaitSpawn(sctx, sp, client.Watch{})
	if err != nil {
		return seat, err
	}
	if res.State != ep.GoalSucceeded {
		return seat, fmt.Errorf("spawn of %s: %s %+v", persona, res.State, res.Error)
	}
	return seat, nil
}

// firstOutput is pty.Start of argv until its first output.
func firstOutput(ctx context.Context, argv ...string) func(int) (time.Duration, error) {
	return func(int) (time.Duration, error) {
		start := time.Now()
		s, err := pty.Start(ctx, pty.Config{Path: argv[0], Args: argv[1:]})
		if err != nil {
			return 0, err
		}
		_, err = waitFor(s.FirstOutput(), "the first output")
		d := time.Since(start)
		s.Close()
		return d, err
	}
}

// settled runs measure after the emulator a seat's start leaves to be
// built ahead is built and its garbage collected, so that neither lands
// in the next measure, cotal's or the floor's.
func settled(measure func(int) (time.Duration, error)) func(int) (time.Duration, error) {
	return func(i int) (time.Duration, error) {
		pty.SpareReady()
		runtime.GC()
		return measure(i)
	}
}

// startPath is the start of a seat in a process that starts seats (a
// manager running them itself), which keeps an emulator built ahead; a
// kept seat's keeper builds its one while the program starts.
func startPath(ctx context.Context, _ *env, budget time.Duration) (Stat, Stat, error) {
	pty.KeepSpare()
	argv := []string{"sh", "-c", "echo ready; sleep 5"}
	buf := make([]byte, 64)
	floor := func(int) (time.Duration, error) {
		start := time.Now()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "TERM=xterm-256color")
		ptmx, err := cpty.StartWithSize(cmd, &cpty.Winsize{Cols: pty.DefaultCols, Rows: pty.DefaultRows})
		if err != nil {
			return 0, err
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = ptmx.Close() }()
		if _, err := ptmx.Read(buf); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	return pair(ctx, budget, 5, 2000, settled(firstOutput(ctx, argv...)), settled(floor))
}

// spawnPath is a spawn until its goal says ready, for sh (which draws a
// prompt and keeps running), next to pty.Start of sh until its first
// output; the goal is a bound of its own.
func spawnPath(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
	if err := e.persona("shell", "sh", nil, nil, false); err != nil {
		return Stat{}, Stat{}, err
	}
	cotal := func(int) (time.Duration, error) {
		start := time.Now()
		_, err := e.spawn(ctx, "shell")
		d := time.Since(start)
		e.cleanup() // the stop, outside the measure
		return d, err
	}
	return pair(ctx, budget, 3, 500, cotal, firstOutput(ctx, "sh"))
}

// markerCommand types mark”er-N-end so the echo of the typed line never
// matches; only the command's output reads marker-N-end.
func markerCommand(i int) (cmd, want string) {
	return fmt.Sprintf("echo mark''er-%d-end", i), fmt.Sprintf("marker-%d-end", i)
}

// inputPath is the manager's input command until its screen command,
// waiting at the manager for the text, shows the output; next to
// pty.Paste until pty.Screen shows it.
func inputPath(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
	if err := e.persona("shell", "sh", nil, nil, false); err != nil {
		return Stat{}, Stat{}, err
	}
	seat, err := e.spawn(ctx, "shell")
	if err != nil {
		return Stat{}, Stat{}, err
	}
	cotal := func(i int) (time.Duration, error) {
		cmd, want := markerCommand(i)
		start := time.Now()
		if _, err := e.mgr.Input(ctx, seat, cmd, true); err != nil {
			return 0, err
		}
		r, err := e.mgr.ScreenUntil(ctx, seat, want, within)
		if err != nil {
			return 0, err
		}
		if r.Matched == nil || !*r.Matched {
			return 0, fmt.Errorf("no %s on the seat's screen", want)
		}
		return time.Since(start), nil
	}
	s, err := pty.Start(ctx, pty.Config{Path: "sh"})
	if err != nil {
		return Stat{}, Stat{}, err
	}
	e.defer_(s.Close)
	if _, err := waitFor(s.FirstOutput(), "sh's prompt"); err != nil {
		return Stat{}, Stat{}, err
	}
	out, stop := s.Subscribe()
	e.defer_(stop)
	floor := func(i int) (time.Duration, error) {
		cmd, want := markerCommand(i)
		start := time.Now()
		if _, err := s.Paste(cmd, true); err != nil {
			return 0, err
		}
		// Look after each chunk of output, and every 100µs since the
		// emulator draws a little behind the output.
		deadline := time.After(within)
		for !strings.Contains(s.Screen(), want) {
			select {
			case <-out:
			case <-time.After(100 * time.Microsecond):
			case <-deadline:
				return 0, fmt.Errorf("no %s on the pty's screen", want)
			}
		}
		return time.Since(start), nil
	}
	return pair(ctx, budget, 5, 2000, cotal, floor)
}

// injectPath is a peer's DM until the seat's agent (the bench reader)
// read the injected line off its terminal, or with injected set until
// the sender's receipt says injected; next to the same hand-over done by
// hand: a JetStream publish, its consumer pasting the same framed block
// into the pty of the same reader, and the ack.
func injectPath(injected bool) func(context.Context, *env, time.Duration) (Stat, Stat, error) {
	return func(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
		self, err := os.Executable()
		if err != nil {
			return Stat{}, Stat{}, err
		}
		stamps := filepath.Join(e.dir, e.name("stamps"))
		env := map[string]string{StampsEnv: stamps}
		if err := e.persona("reader", self, []string{ReaderArg}, env, true); err != nil {
			return Stat{}, Stat{}, err
		}
		seat, err := e.spawn(ctx, "reader")
		if err != nil {
			return Stat{}, Stat{}, err
		}
		bob, err := e.agent(ctx, e.name("bob"), []string{}, nil, mesh.Options{OneShot: true, Subscribe: []string{}})
		if err != nil {
			return Stat{}, Stat{}, err
		}
		if err := sees(ctx, bob, seat.Name); err != nil {
			return Stat{}, Stat{}, err
		}
		w, err := bob.WatchReceipts()
		if err != nil {
			return Stat{}, Stat{}, err
		}
		e.defer_(w.Close)
		cotal := func(i int) (time.Duration, error) {
			marker := fmt.Sprintf("mark-%d", i)
			start := time.Now()
			r, err := bob.DM(ctx, seat.Name, marker)
			if err != nil {
				return 0, err
			}
			var at time.Time
			wctx, cancel := context.WithTimeout(ctx, within)
			defer cancel()
			p := w.Wait(wctx, r.ID, wire.RungAcked, 1, func(p Progress) {
				if at.IsZero() && p.Reaches(wire.RungInjected) {
					at = time.Now()
				}
			})
			if len(p) != 1 || !p[0].Injected || p[0].Reached != wire.RungAcked {
				return 0, fmt.Errorf("the receipt of %s: %+v", marker, p)
			}
			if injected {
				if at.IsZero() {
					return 0, fmt.Errorf("no injected note for %s", marker)
				}
				return at.Sub(start), nil
			}
			stamp, err := waitStamp(stamps, marker)
			return time.Duration(stamp - start.UnixNano()), err
		}
		floor, err := rawInject(ctx, e, injected)
		if err != nil {
			return Stat{}, Stat{}, err
		}
		return pair(ctx, budget, 5, 2000, cotal, floor)
	}
}

// Progress is a receipt's progress as the watch reports it.
type Progress = mesh.Progress

// rawInject is injectPath's floor.
func rawInject(ctx context.Context, e *env, injected bool) (func(int) (time.Duration, error), error) {
	name := e.name("RAWINJ")
	st, err := e.stream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"rawinj." + name}})
	if err != nil {
		return nil, err
	}
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "r", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	stamps := filepath.Join(e.dir, e.name("stamps"))
	s, err := pty.Start(ctx, pty.Config{Path: self, Args: []string{ReaderArg}, Env: append(os.Environ(), StampsEnv+"="+stamps)})
	if err != nil {
		return nil, err
	}
	e.defer_(s.Close)
	out, stop := s.Subscribe()
	e.defer_(stop)
	for started := time.After(within); !strings.Contains(s.Screen(), "reader ready"); {
		select {
		case <-out:
		case <-time.After(time.Millisecond): // the emulator draws behind the output
		case <-started:
			return nil, errors.New("the reader did not start")
		}
	}
	pasted := make(chan time.Time, 1)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		block := render.Block([]string{"[DM from bob] " + string(m.Data())}, nil)
		if _, err := s.Paste(block, true); err == nil {
			at := time.Now()
			if m.DoubleAck(ctx) == nil {
				pasted <- at
			}
		}
	}, floorPull()...)
	if err != nil {
		return nil, err
	}
	e.defer_(cc.Stop)
	js := e.js
	return func(i int) (time.Duration, error) {
		marker := fmt.Sprintf("mark-%d", i)
		start := time.Now()
		if _, err := js.Publish(ctx, "rawinj."+name, []byte(marker)); err != nil {
			return 0, err
		}
		at, err := waitFor(pasted, "the raw hand-over's ack")
		if err != nil {
			return 0, err
		}
		if injected {
			return at.Sub(start), nil
		}
		stamp, err := waitStamp(stamps, marker)
		return time.Duration(stamp - start.UnixNano()), err
	}, nil
}
