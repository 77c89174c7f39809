package seat

import (
	"context"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
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
// for the agent's own inbox read; each batch is one framed block typed as
// a bracketed paste and a separate Enter, and its items are acked only
// once the pty accepted every byte; otherwise they go back, marked as a
// possible repeat when part was written. Nothing is injected while the
// floor is the person's.
type injector struct {
	m    *Manager
	s    *Seat
	conn *mesh.Endpoint
	proc *pty.Seat

	repeats map[string]bool // ids written without confirmation
}

func (m *Manager) startInjector(s *Seat, conn *mesh.Endpoint, proc *pty.Seat) {
	in := &injector{m: m, s: s, conn: conn, proc: proc, repeats: map[string]bool{}}
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
	for {
		select {
		case <-ctx.Done():
			return
		case <-in.proc.Done():
			return
		case <-in.conn.Arrivals():
		case <-t.C:
		}
		in.once()
	}
}

// once injects what the attention table says is due now, and tells the
// senders of what waits why it waits.
func (in *injector) once() {
	if why := in.s.held(in.m); why != "" {
		in.s.setHeld(why)
		in.conn.Mark(func(it *mesh.Item) { it.Note(wire.RungTaken, "held: "+why) })
		return
	}
	in.s.setHeld("")
	me := in.conn.Me()
	rec, _ := in.conn.PresenceRecord()
	att := rec.Attention
	if att == "" {
		att = presence.Open
	}
	idle := rec.Status == presence.Idle
	action := func(it *mesh.Item) mesh.Action {
		return mesh.Attend(it, me, att, in.conn.ChannelMode(it.Subject.Channel), idle)
	}
	for _, it := range in.conn.TakeWhere(func(it *mesh.Item) bool { return action(it) == mesh.Drop }) {
		_ = it.Drop("channel #" + it.Subject.Channel + " is muted")
	}
	// What is left for the inbox now stays there: a post held back under
	// focus or on a quiet channel is not injected when attention changes.
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
	if !in.conn.AnyWhere(func(it *mesh.Item) bool { return action(it) == mesh.Inject }) {
		return
	}
	// Held items ride along with the ones due now (dnd: the next turn).
	items := in.conn.TakeWhere(func(it *mesh.Item) bool {
		a := action(it)
		return a == mesh.Inject || a == mesh.Hold
	})
	if len(items) > 0 {
		in.inject(items)
	}
}

// inject types one block and settles its items by what the pty accepted.
func (in *injector) inject(items []*mesh.Item) {
	me := in.conn.Me()
	lines := make([]string, len(items))
	repeat := make([]bool, len(items))
	for i, it := range items {
		lines[i] = render.Item(it.Kind, it.Subject, it.Msg, it.Historical, me)
		repeat[i] = it.Msg.ID != "" && in.repeats[it.Msg.ID]
	}
	n, err := in.proc.Paste(render.Block(lines, repeat), true)
	if err != nil {
		if n > 0 { // part of it reached the agent
			for _, it := range items {
				if it.Msg.ID != "" {
					in.repeats[it.Msg.ID] = true
				}
			}
		}
		in.m.logf("seat %s: injecting %d message(s): %v (%d bytes accepted); they stay in its inbox", in.s.name, len(items), err, n)
		for _, it := range items {
			it.Note(wire.RungTaken, "its terminal did not accept the injection; tried again later")
		}
		in.conn.Requeue(items)
		return
	}
	for _, it := range items {
		delete(in.repeats, it.Msg.ID)
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
