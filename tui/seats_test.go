package tui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/client"
)

// fakeControl records the seat commands the model issues and answers them.
type fakeControl struct {
	mu       sync.Mutex
	calls    []string
	personas []string
	err      error
}

func (f *fakeControl) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.err
}

func (f *fakeControl) Personas(context.Context) ([]client.PersonaChoice, error) {
	var cs []client.PersonaChoice
	for _, n := range f.personas {
		cs = append(cs, client.PersonaChoice{Name: n, Harness: "command", Typed: true})
	}
	return cs, f.record("personas")
}

func (f *fakeControl) Spawn(_ context.Context, persona string) (SpawnTicket, error) {
	return SpawnTicket{Persona: persona, Name: persona + "_2", Manager: "m1", GoalID: "g1", Deadline: time.Second}, f.record("spawn " + persona)
}

func (f *fakeControl) AwaitSpawn(_ context.Context, t SpawnTicket) (SpawnOutcome, error) {
	return SpawnOutcome{State: SpawnSucceeded}, f.record("await " + t.GoalID)
}

func (f *fakeControl) Stop(_ context.Context, s Seat) (string, error) {
	return "exited 0", f.record("stop " + s.Name + "@" + s.Manager)
}

func (f *fakeControl) Input(_ context.Context, s Seat, text string) (int, error) {
	return len(text) + 1, f.record("input " + s.Name + "@" + s.Manager + " " + text)
}

func (f *fakeControl) Answer(_ context.Context, s Seat, decision string) (string, error) {
	return s.Asks, f.record("answer " + s.Name + "@" + s.Manager + " " + decision)
}

// Sessions records the attach and refuses it: the tests run no terminal.
func (f *fakeControl) Sessions(s Seat) tty.Open {
	return func(context.Context) (*nats.Conn, json.RawMessage, error) {
		_ = f.record("attach " + s.Name + "@" + s.Manager + " uid " + s.UID)
		return nil, nil, errAttachRefused
	}
}

var errAttachRefused = errors.New("no terminal in this test")

func (f *fakeControl) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, "; ")
}

// running is a ready seat on manager m1 whose mesh status is mesh.
func running(name, mesh string, since time.Duration) Seat {
	return Seat{
		Name: name, PeerID: "local." + name, Manager: "m1", Persona: name, Harness: "command", State: "ready", Process: "running",
		PID: 1000 + len(name), Started: t0.Add(-10 * time.Minute), LastOutput: t0.Add(-time.Second), Mesh: mesh, MeshSince: t0.Add(-since),
	}
}

// seatRow is the row of the seats band that shows name, or "".
func seatRow(screen, name string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "SEATS") {
			continue
		}
		for _, l := range lines[i+1:] {
			l, _, _ = strings.Cut(l, "│")
			if r := string([]rune(l)[min(2, len([]rune(l))):]); strings.HasPrefix(r, name+" ") || strings.HasPrefix(r, "›"+name+" ") {
				return l
			}
		}
	}
	return ""
}

func seatHarness(t *testing.T, cfg Config) (*harness, *fakeControl) {
	t.Helper()
	f := &fakeControl{personas: []string{"reviewer", "shell"}}
	cfg.SeatControl = f
	return newTestModel(t, cfg, 120, 40), f
}

// run runs a command and feeds its message back, as the program would.
func (h *harness) run(cmd tea.Cmd) tea.Cmd {
	h.t.Helper()
	if cmd == nil {
		h.t.Fatal("no command")
	}
	return h.send(cmd())
}

func TestSeatRowsFromACensus(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	gone := running("gone", "working", time.Minute)
	gone.Process, gone.State, gone.Exited = "killed SIGKILL", "exited", t0.Add(-time.Minute)
	quiet := running("quiet", "offline", 0)
	starting := running("young", "offline", 0)
	starting.State = "starting"
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{
		running("ok", "idle", 2*time.Minute), gone, quiet, starting,
	}}})
	s := h.screen()
	tests := []struct{ seat, want string }{
		{"ok", "running      10m    1002 idle         2m   1s"},
		{"gone", "killed KILL    -    1004 ≠ working    1m   1s process gone"},
		{"quiet", "running      10m    1005 ≠ offline    0s   1s off the mesh"},
		{"young", "starting     10m    1005 offline"},
	}
	for _, tt := range tests {
		if l := seatRow(s, tt.seat); !strings.Contains(l, tt.want) {
			t.Errorf("%s row %q lacks %q", tt.seat, l, tt.want)
		}
	}
	if strings.Contains(seatRow(s, "young"), "≠") {
		t.Error("a starting seat off the mesh is marked as a disagreement")
	}
	if !strings.Contains(s, "SEATS · 4") || !strings.Contains(s, "›gone") {
		t.Errorf("no title or the first seat is not selected:\n%s", s)
	}
	if sel, ok := h.m.focus.load(); !ok || sel.Name != "gone" {
		t.Errorf("the collector is told to fetch %q, want gone", sel.Name)
	}

	// The screen of the selected seat shows; one of another seat does not.
	h.batch(time.Second, batchMsg{Shot: &screenShot{Name: "ok", Manager: "m1", Screen: Screen{Text: "not this one", Running: true}}})
	h.batch(time.Second, batchMsg{Shot: &screenShot{Name: "gone", Manager: "m1", Screen: Screen{Text: "$ sleep 100\nKilled\n\n"}}})
	s = h.screen()
	if !strings.Contains(s, "SCREEN · gone · exited, last screen") || !strings.Contains(s, "│Killed") || strings.Contains(s, "not this one") {
		t.Errorf("preview does not show gone's last screen:\n%s", s)
	}

	// tab moves to the seats band; j selects the next seat and the preview waits for its screen.
	h.keys("<tab>", "j")
	if sel, _ := h.m.focus.load(); sel.Name != "ok" || !strings.Contains(h.screen(), "SCREEN · ok") {
		t.Errorf("j in the seats band selected %q", sel.Name)
	}
	if !strings.Contains(h.screen(), "fetching the screen…") {
		t.Error("the preview still shows the previous seat's screen")
	}
}

func TestNoManagerAndNoSeats(t *testing.T) {
	h, _ := seatHarness(t, Config{SeatSource: nil})
	if !strings.Contains(h.screen(), "no manager yet") {
		t.Errorf("without a source:\n%s", h.screen())
	}
	h, _ = seatHarness(t, Config{SeatSource: nopSource{}})
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1}})
	if !strings.Contains(h.screen(), "no seats · s spawns one") {
		t.Errorf("with a manager and no seats:\n%s", h.screen())
	}
	h.batch(time.Second, batchMsg{SeatsChanged: true, Census: Census{}})
	if !strings.Contains(h.screen(), "no manager yet") {
		t.Errorf("with no manager answering:\n%s", h.screen())
	}
}

type nopSource struct{}

func (nopSource) Seats(context.Context) (Census, error)        { return Census{}, nil }
func (nopSource) Changes() <-chan struct{}                     { return nil }
func (nopSource) Screen(context.Context, Seat) (Screen, error) { return Screen{}, nil }

func TestSeatGivesTheRosterProgressAndHarness(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	busy := running("busy", "working", 8*time.Minute)
	busy.LastOutput = t0.Add(-7 * time.Minute)
	h.batch(0, batchMsg{
		PeersChanged: true, Peers: []presence.Peer{peer("busy", presence.Working, 8*time.Minute), peer("remote", presence.Working, time.Minute)},
		SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{busy}},
	})
	s := h.screen()
	if l := rosterLine(s, "busy"); !strings.Contains(l, "command  working · stalled 7m") {
		t.Errorf("seat row %q lacks the harness tag and the stall", l)
	}
	if !strings.Contains(s, "  NAME         HARNESS  STATUS") {
		t.Errorf("the harness column has no readable header:\n%s", s)
	}
	if l := rosterLine(s, "remote"); !strings.Contains(l, "working · progress unknown") {
		t.Errorf("unobserved row %q", l)
	}
}

func TestNeedsYouTakesWaitingSeatsOldestFirstAndRingsOnce(t *testing.T) {
	h, _ := seatHarness(t, Config{Bell: true})
	peers := []presence.Peer{
		peer("lone", presence.Waiting, 3*time.Minute, withActivity("approve the deploy")),
		peer("seatidle", presence.Waiting, time.Hour), // its manager says idle: the census wins
		peer("sw", presence.Waiting, time.Minute),
	}
	first := []Seat{running("sw", "waiting", 6*time.Minute), running("seatidle", "idle", time.Hour)}
	h.batch(0, batchMsg{PeersChanged: true, Peers: peers, SeatsChanged: true, Census: Census{Managers: 1, Seats: first}})
	if h.bells != 0 {
		t.Errorf("rang %d times for seats waiting before the dashboard looked", h.bells)
	}
	var got []string
	for _, e := range h.m.needs.waiting {
		got = append(got, e.name)
	}
	if strings.Join(got, ",") != "sw,lone" {
		t.Errorf("lane %v, want sw (6m, by its seat) then lone (3m)", got)
	}
	s := h.screen()
	if !strings.Contains(s, "◐ sw  waiting 6m") || !strings.Contains(s, "◐ lone  waiting 3m  approve the deploy") {
		t.Errorf("lane not shown with waits:\n%s", s)
	}

	// A seat enters: one bell, however many batches say so again.
	second := append(first, running("late", "waiting", 0))
	for i := range 3 {
		h.batch(time.Duration(i+1)*time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: second}})
	}
	if h.bells != 1 {
		t.Errorf("bells = %d after one seat entered, want 1", h.bells)
	}
	// It leaves and comes back: that is a new entry.
	h.batch(5*time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: first}})
	h.batch(6*time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: second}})
	if h.bells != 2 {
		t.Errorf("bells = %d after it came back, want 2", h.bells)
	}
}

func TestQuitModalNamesTheSeatsAndWaitsForTheAnswer(t *testing.T) {
	live := []string{"shell", "shell_2"}
	h, _ := seatHarness(t, Config{ConfirmQuit: func() []string { return live }})
	for _, k := range []string{"q", "ctrl+c"} {
		var cmd tea.Cmd
		if k == "q" {
			cmd = h.keys("q")
		} else {
			cmd = h.send(tea.KeyMsg{Type: tea.KeyCtrlC})
		}
		if cmd == nil {
			t.Fatalf("%s asked nothing", k)
		}
		h.send(cmd())
		s := h.screen()
		if h.m.mode != modeConfirm || !strings.Contains(s, "2 seats still running: shell, shell_2 — stop them and quit? (y) / cancel (n)") ||
			!strings.Contains(s, "y  stop them and quit") {
			t.Fatalf("%s: no question naming the seats:\n%s", k, s)
		}
		if cmd := h.keys("n"); cmd != nil || h.m.mode != modeNormal || h.m.quitting {
			t.Fatalf("%s then n did not return to the dashboard", k)
		}
	}
	h.send(h.keys("q")())
	if cmd := h.keys("y"); cmd == nil || cmd() != tea.Quit() || !h.m.quitting {
		t.Fatal("y did not quit")
	}

	// A client never asks: there is no ConfirmQuit.
	c, _ := seatHarness(t, Config{Space: "default", Hosting: false})
	if cmd := c.keys("q"); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("a client did not quit at once")
	}
}

func TestStopAsksNamingTheSeat(t *testing.T) {
	h, f := seatHarness(t, Config{})
	gone := running("gone", "offline", 0)
	gone.Process = "exited 1"
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{gone, running("shell", "idle", time.Minute)}}})
	if cmd := h.keys("x"); cmd != nil || h.m.mode != modeNormal || !strings.Contains(h.screen(), "seat gone is not running (exited 1)") {
		t.Fatalf("x on an exited seat was not refused in words:\n%s", h.screen())
	}
	h.keys("<tab>", "j", "x")
	s := h.screen()
	if h.m.mode != modeStop || !strings.Contains(s, "stop seat shell? (y) / cancel (n)") || !strings.Contains(s, "STOP SEAT shell?") {
		t.Fatalf("no question naming shell:\n%s", s)
	}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	if s := h.screen(); !strings.Contains(s, "SIGKILL after 3") || !strings.Contains(s, "it goes offline.") {
		t.Errorf("the question is cut at 80 columns:\n%s", s)
	}
	h.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	if cmd := h.keys("n"); cmd != nil || f.log() != "" {
		t.Fatalf("n stopped something: %s", f.log())
	}
	h.keys("x")
	h.run(h.keys("y"))
	if f.log() != "stop shell@m1" {
		t.Errorf("calls %q, want stop shell@m1", f.log())
	}
	if s := h.screen(); !strings.Contains(s, "stopped shell (exited 0); it is offline") {
		t.Errorf("no receipt:\n%s", s)
	}
}

func TestTypeALineIntoTheSelectedSeat(t *testing.T) {
	h, f := seatHarness(t, Config{})
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{running("shell", "idle", time.Minute)}}})
	h.keys("i")
	if h.m.mode != modeType || !strings.Contains(h.screen(), "type into shell>") {
		t.Fatalf("i opened no line:\n%s", h.screen())
	}
	h.keys("echo hi q")
	h.run(h.keys("<enter>"))
	if f.log() != "input shell@m1 echo hi q" {
		t.Errorf("calls %q", f.log())
	}
	if s := h.screen(); h.m.mode != modeNormal || !strings.Contains(s, "→ sent 10 bytes to shell") {
		t.Errorf("no receipt in the status bar:\n%s", s)
	}

	f.err = errors.New("failed_precondition: seat shell exited; nothing was written")
	h.keys("i", "ls")
	h.run(h.keys("<enter>"))
	if s := h.screen(); !strings.Contains(s, "! 0s ago: input to shell: failed_precondition: seat shell exited") {
		t.Errorf("error not shown:\n%s", s)
	}
	h.keys("i", "never", "<esc>")
	if h.m.mode != modeNormal || strings.Count(f.log(), "input") != 2 {
		t.Errorf("esc sent the line: %s", f.log())
	}
}

func TestSpawnFromThePicker(t *testing.T) {
	h, f := seatHarness(t, Config{})
	h.run(h.keys("s"))
	s := h.screen()
	if h.m.mode != modePicker || !strings.Contains(s, "SPAWN A SEAT") || !strings.Contains(s, "› reviewer") || !strings.Contains(s, "  shell") {
		t.Fatalf("no picker:\n%s", s)
	}
	h.keys("j")
	await := h.run(h.keys("<enter>"))
	if !strings.Contains(h.screen(), "spawning shell_2 from persona shell") {
		t.Errorf("no word of the accepted spawn:\n%s", h.screen())
	}
	h.run(await)
	if f.log() != "personas; spawn shell; await g1" {
		t.Errorf("calls %q", f.log())
	}
	if !strings.Contains(h.screen(), "shell_2 is up and on the mesh") {
		t.Errorf("no outcome:\n%s", h.screen())
	}
	// The spawned seat is selected when the census shows it.
	h.batch(time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{running("alpha", "idle", 0), running("shell_2", "idle", 0)}}})
	if sel, _ := h.m.seats.selected(); sel.Name != "shell_2" {
		t.Errorf("selected %q after the spawn, want shell_2", sel.Name)
	}
	if sel, _, _ := h.m.target(); sel.Name != "shell_2" {
		t.Errorf("the keys act on %q after the spawn, want shell_2", sel.Name)
	}

	f.personas = nil
	h.run(h.keys("s"))
	if h.m.mode != modeNormal || !strings.Contains(h.screen(), "no personas to spawn: add one as .cotal/agents/<name>.md") {
		t.Errorf("an empty persona list was not said:\n%s", h.screen())
	}

	n := newTestModel(t, Config{}, 120, 40) // no SeatControl
	if cmd := n.keys("s"); cmd != nil || !strings.Contains(n.screen(), "cannot act on seats") {
		t.Errorf("s without a manager:\n%s", n.screen())
	}
}

func TestGoldenSeats(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	waiting := running("reviewer", "waiting", 4*time.Minute)
	waiting.Harness = "claude"
	exited := running("shell", "offline", 0)
	exited.Process, exited.State = "exited 0", "exited"
	shell2 := running("shell_2", "idle", 2*time.Minute)
	h.batch(0, batchMsg{
		PeersChanged: true, Peers: []presence.Peer{
			peer("reviewer", presence.Waiting, 4*time.Minute, withActivity("may I push?")),
			peer("shell_2", presence.Idle, 2*time.Minute),
		},
		SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{waiting, exited, shell2}},
	})
	h.keys("<tab>", "j", "j")
	h.batch(time.Second, batchMsg{Shot: &screenShot{Name: "shell_2", Manager: "m1", Screen: Screen{Running: true, Text: "$ echo dash-$((6*7))\ndash-42\n$ \n\n\n"}}})
	h.keys("i", "echo hi")
	golden(t, "seats", h.screen())
}

// A seat that could read the space's keys says so: a marker on its row,
// the reason on the detail line above its screen; a sandboxed one says
// nothing.
func TestUnsandboxedSeatIsMarked(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	bare := running("bare", "idle", time.Minute)
	bare.Sandbox = "unsandboxed: no user namespaces here"
	safe := running("safe", "idle", time.Minute)
	safe.Sandbox = "namespace"
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{bare, safe}}})
	h.batch(time.Second, batchMsg{Shot: &screenShot{Name: "bare", Manager: "m1", Screen: Screen{Text: "$ ", Running: true}}})
	s := h.screen()
	if !strings.Contains(seatRow(s, "bare"), "unsandboxed") || strings.Contains(seatRow(s, "safe"), "sandbox") {
		t.Errorf("rows:\n%s\n%s", seatRow(s, "bare"), seatRow(s, "safe"))
	}
	if !strings.Contains(s, "│unsandboxed: no user namespaces here") {
		t.Errorf("no reason above the selected seat's screen:\n%s", s)
	}
	h.keys("<tab>", "j")
	if strings.Contains(h.screen(), "│unsandboxed:") {
		t.Errorf("the reason stays for a sandboxed seat:\n%s", h.screen())
	}
}

// A seat taken back from its keeper says since when on its row, a resumed
// one since when, and from which session above its screen; a lost
// one says lost, since when, and why above its screen.
func TestReattachedAndLostSeatsAreMarked(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	back := running("back", "idle", time.Minute)
	back.Reattached = t0.Add(-30 * time.Second)
	again := running("resumed1", "idle", time.Minute)
	again.Resumed, again.ResumedFrom = t0.Add(-45*time.Second), "0f3c9a2e-5b1d-4c7e-9a10-123456789abc"
	gone := running("gone", "offline", time.Minute)
	gone.Process = "lost"
	gone.Lost, gone.LostWhy = t0.Add(-2*time.Minute), "its keeper (pid 42) died; last seen alive 01:02:03"
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{again, back, gone}}})
	h.keys("<tab>", "j")
	h.batch(time.Second, batchMsg{Shot: &screenShot{Name: "gone", Manager: "m1", Screen: Screen{Text: "$ "}}})
	s := h.screen()
	if !strings.Contains(seatRow(s, "back"), "reattached 31s") {
		t.Errorf("the reattached row does not say so:\n%s", s)
	}
	if !strings.Contains(seatRow(s, "resumed1"), "resumed 46s") {
		t.Errorf("the resumed row does not say since when:\n%s", s)
	}
	if r := seatRow(s, "gone"); !strings.Contains(r, "lost 2m ago") {
		t.Errorf("the lost row does not say so:\n%s", s)
	}
	if !strings.Contains(s, "its keeper (pid 42) died") {
		t.Errorf("no reason above the lost seat's screen:\n%s", s)
	}
	h.keys("j")
	h.batch(time.Second, batchMsg{Shot: &screenShot{Name: "resumed1", Manager: "m1", Screen: Screen{Text: "$ "}}})
	if s := h.screen(); !strings.Contains(s, "from session 0f3c9a2e") {
		t.Errorf("no session above the resumed seat's screen:\n%s", s)
	}
}
