package seat

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/pty"
)

// Floor-control and injection timings.
const (
	// floorQuiet is how long after a person's last keystroke in an attach
	// session nothing is injected into the seat (Options.FloorQuiet).
	floorQuiet = 10 * time.Second
	// injectTick is how often the injector looks again without an arrival
	// (the agent became idle, the floor came free).
	injectTick = time.Second
	// screenPoll is how soon it looks at a screen again after output while
	// only the screen holds what is due; screenSettle is how long after
	// the last output it keeps looking (the emulator draws behind it).
	screenPoll   = 25 * time.Millisecond
	screenSettle = 200 * time.Millisecond
)

// Why an injector holds, as ps and the dashboard show it.
const (
	HeldTyping     = "person typing"
	HeldUnsentLine = "person's line unsent"
)

// floor tracks what a person typed into a seat through an attach session:
// while they type, or a line of theirs is unsent, nothing is injected.
// mu guards it.
type floor struct {
	mu      sync.Mutex
	typedAt time.Time
	unsent  bool // keys since the person's last Enter
}

// typed records a person's keystrokes.
func (f *floor) typed(p []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.typedAt = time.Now()
	for _, c := range p {
		switch c {
		case '\r', '\n':
			f.unsent = false
		case 0x03, 0x15: // Ctrl-C, Ctrl-U: the line is gone
			f.unsent = false
		default:
			f.unsent = true
		}
	}
}

// held says why injection waits, "" when the floor is free. attached says
// whether a person is attached now; quiet is how long after their last
// keystroke the floor stays theirs.
func (f *floor) held(attached bool, quiet time.Duration) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.unsent:
		return HeldUnsentLine
	case attached && time.Since(f.typedAt) < quiet:
		return HeldTyping
	}
	return ""
}

// floorTerm is a seat's terminal as attach sessions see it: what a person
// types is written through and noted on the seat's floor.
type floorTerm struct {
	*pty.Seat
	f *floor
}

func (t floorTerm) Write(p []byte) (int, error) {
	t.f.typed(p)
	return t.Seat.Write(p)
}

// injects reports whether arrivals are put in front of the seat's agent:
// a coding-agent harness always; a plain command only when its persona
// asks (`inject: true`), since a shell would run peer text as commands.
func injects(p *Persona) bool {
	if p.Harness != "command" {
		return true
	}
	return p.Launch.Inject != nil && *p.Launch.Inject
}

// injector puts a seat's arrivals in front of its agent as they come (spec
// §12): the attention table decides which now, which later and which only
// for the agent's own inbox read. Nothing is written while the floor is
// the person's.
//
// A harness that reports itself (harness.go) gets its arrivals through
// its hooks (handout.go); the injector only wakes it when it sits idle at
// its own prompt, by typing the fixed nudge, whose prompt's hook then
// hands the arrivals over. Any other program gets them typed: each batch
// one framed block as a bracketed paste and a separate Enter, only while
// its screen allows (no full-screen program up; its persona's prompt rule
// matched, when it has one); its items are acked once the pty accepted
// every byte, otherwise they go back, marked as a possible repeat when
// part was written.
type injector struct {
	m    *Manager
	s    *Seat
	conn *mesh.Endpoint
	proc *pty.Seat
}

func (m *Manager) startInjector(s *Seat, conn *mesh.Endpoint, proc *pty.Seat) {
	in := &injector{m: m, s: s, conn: conn, proc: proc}
	s.mu.Lock()
	s.injects = true
	s.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		in.run(m.ctx)
	}()
}

func (in *injector) run(ctx context.Context) {
	t := time.NewTicker(injectTick)
	defer t.Stop()
	// While only the screen holds what is due (its prompt not drawn yet, a
	// dialog up), the screen is read again soon after each output rather
	// than at the next tick.
	poll := time.NewTicker(screenPoll)
	defer poll.Stop()
	watching := false
	var seen time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-in.proc.Done():
			return
		case <-in.conn.Arrivals():
		case <-in.s.wake:
		case <-t.C:
		case <-poll.C:
			out := in.proc.LastOutput()
			if !watching || (out.Equal(seen) && time.Since(out) > screenSettle) {
				continue
			}
			seen = out
		}
		watching = in.once()
	}
}

// once injects what the attention table says is due now, and tells the
// senders of what waits why it waits. It reports whether what is due waits
// on the screen alone.
func (in *injector) once() (screen bool) {
	in.s.expireFlights(in.m)
	if why := in.s.held(in.m); why != "" {
		in.s.setHeld(why)
		in.conn.Mark(func(it *mesh.Item) { it.Note(wire.RungTaken, "held: "+why) })
		return false
	}
	in.s.setHeld("")
	rec, _ := in.conn.PresenceRecord()
	reports := in.s.h.reports()
	idle := rec.Status == presence.Idle
	if reports {
		// Its own word: its turn has ended (the nudge still waits for its
		// prompt).
		in.s.mu.Lock()
		idle = in.s.agent.state == client.AgentIdle
		in.s.mu.Unlock()
	}
	action := attendFn(in.conn, idle)
	for _, it := range in.conn.TakeWhere(func(it *mesh.Item) bool { return action(it) == mesh.Drop }) {
		_ = it.Drop("channel #" + it.Subject.Channel + " is muted")
	}
	// What is left for the inbox now stays there: a post held back under
	// focus or on a quiet channel is not injected when attention changes.
	att := rec.Attention
	if att == "" {
		att = presence.Open
	}
	in.conn.Mark(func(it *mesh.Item) {
		if !it.PullOnly && action(it) == mesh.Pull {
			it.PullOnly = true
			why := "attention " + string(att)
			if in.conn.ChannelMode(it.Subject.Channel) == mesh.ModeQuiet {
				why = "channel #" + it.Subject.Channel + " is quiet"
			}
			it.Note(wire.RungTaken, why+": left for the agent's inbox read")
		}
	})
	if reports && in.s.awaitsTurn() {
		// What its session's start handed over reaches the model with
		// its first turn.
		return in.nudge()
	}
	if !in.conn.AnyWhere(func(it *mesh.Item) bool { return action(it) == mesh.Inject }) {
		return false
	}
	if reports {
		return in.nudge()
	}
	if why, screen := in.terminalHeld(); why != "" {
		in.conn.Mark(func(it *mesh.Item) { it.Note(wire.RungTaken, "held: "+why) })
		return screen
	}
	// Held items ride along with the ones due now (dnd: the next turn).
	items := in.conn.TakeWhere(func(it *mesh.Item) bool {
		a := action(it)
		return a == mesh.Inject || a == mesh.Hold
	})
	if len(items) > 0 {
		in.inject(items)
	}
	return false
}

// nudgeText is what wakes a harness idle at its prompt: fixed, no digit or
// key a dialog could take as an answer; the messages themselves reach the
// model through the hook of the prompt it starts.
const nudgeText = "[cotal] new peer messages: read them in this turn's context"

// nudge wakes a harness idle at its own prompt to take what is due through
// its hooks; while it works or waits on a person the items wait, saying
// why. It reports whether they wait on its screen alone.
func (in *injector) nudge() (screen bool) {
	if why, screen := in.s.idleAtPrompt(in.proc); why != "" {
		in.conn.Mark(func(it *mesh.Item) { it.Note(wire.RungTaken, "held: "+why) })
		return screen
	}
	if _, err := in.proc.Paste(nudgeText, true); err != nil {
		in.m.logf("seat %s: typing the nudge: %v", in.s.name, err)
		return false
	}
	// Until its hooks say otherwise it is no longer known to be at its
	// prompt: one nudge per time it sits there.
	in.s.mu.Lock()
	in.s.agent.atPrompt, in.s.agent.screenIdle = false, false
	in.s.mu.Unlock()
	in.conn.Mark(func(it *mesh.Item) { it.Note(wire.RungTaken, "woke its agent at its prompt; its hook hands it over") })
	return false
}

// idleAtPrompt says why a harness that reports itself is not verifiably
// idle at its own prompt, "" when it is: its reports say so (its turn
// ended and nothing was asked or typed since), or, before its first turn
// or after a dialog closed without a word from it, its screen does; and
// no dialog shows on its screen either way (and, without its reports'
// proof, its prompt does). screen says the screen alone stands in the way.
func (s *Seat) idleAtPrompt(proc *pty.Seat) (why string, screen bool) {
	s.mu.Lock()
	a := s.agent
	s.mu.Unlock()
	switch {
	case a.ask != nil || a.state == client.AgentWaiting:
		return "waiting on a person: " + a.asks, false
	case a.state == client.AgentWorking:
		return "in a turn; its hooks hand it over", false
	case !a.atPrompt && !a.screenIdle:
		return "not known to be at its prompt", false
	}
	// Its own screen rule knows its prompt (Claude Code may draw it on
	// the alternate screen).
	scr := s.h.screen(strings.Split(proc.Screen(), "\n"))
	switch {
	case scr.dialog != "":
		return "a dialog is up: " + scr.dialog, true
	case a.atPrompt:
		// Its reports prove it: its prompt may be drawn a moment later.
	case scr.known && !scr.atPrompt:
		return "its screen shows no prompt", true
	case !s.h.fullScreen() && proc.AltScreen():
		return "a full-screen program is up", true
	}
	return "", false
}

// terminalHeld says why text may not be typed into a program that does
// not report itself, "" when it may: never while a full-screen program is
// up, and, when the persona names its prompt, only while the screen
// shows it.
func (in *injector) terminalHeld() (why string, screen bool) {
	if !in.s.h.fullScreen() && in.proc.AltScreen() {
		return "a full-screen program is up", true
	}
	if !in.s.h.readsScreen() {
		return "", false
	}
	scr := in.s.h.screen(strings.Split(in.proc.Screen(), "\n"))
	if scr.known && !scr.atPrompt {
		return "its screen shows no prompt", true
	}
	return "", false
}

// inject types one block and settles its items by what the pty accepted.
func (in *injector) inject(items []*mesh.Item) {
	me := in.conn.Me()
	lines := make([]string, len(items))
	repeat := make([]bool, len(items))
	in.s.mu.Lock()
	for i, it := range items {
		lines[i] = render.Item(it.Kind, it.Subject, it.Msg, it.Historical, me)
		repeat[i] = it.Msg.ID != "" && in.s.repeats[it.Msg.ID]
	}
	in.s.mu.Unlock()
	n, err := in.proc.Paste(render.Block(lines, repeat), true)
	if err != nil {
		if n > 0 { // part of it reached the agent
			in.s.mu.Lock()
			if in.s.repeats == nil {
				in.s.repeats = map[string]bool{}
			}
			for _, it := range items {
				if it.Msg.ID != "" {
					in.s.repeats[it.Msg.ID] = true
				}
			}
			in.s.mu.Unlock()
		}
		in.m.logf("seat %s: injecting %d message(s): %v (%d bytes accepted); they stay in its inbox", in.s.name, len(items), err, n)
		for _, it := range items {
			it.Note(wire.RungTaken, "its terminal did not accept the injection; tried again later")
		}
		in.conn.Requeue(items)
		return
	}
	in.s.mu.Lock()
	for _, it := range items {
		delete(in.s.repeats, it.Msg.ID)
	}
	in.s.mu.Unlock()
	for _, it := range items {
		it.Note(wire.RungInjected, "")
		_ = it.Ack()
	}
}

// held says why injection into the seat waits for its person, "" for none.
func (s *Seat) held(m *Manager) string {
	return s.floor.held(len(m.sessionRows(s.name)) > 0, m.opts.FloorQuiet)
}

func (s *Seat) setHeld(why string) {
	s.mu.Lock()
	s.heldWhy = why
	s.mu.Unlock()
}
