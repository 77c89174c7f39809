package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh/presence"
)

// laneLine is the NEEDS YOU line that names name, or "".
func laneLine(screen, name string) string {
	for _, l := range strings.Split(screen, "\n") {
		if _, right, ok := strings.Cut(l, "│"); ok && strings.Contains(right, " "+name+"  ") {
			return strings.TrimSpace(right)
		}
	}
	return ""
}

// The lane counts every seat that needs its person, each with its reason
// and its age, and the rows' shapes follow: a stall is no green dot, a
// crash no grey cross; a stopped seat and one that exited 0 need nobody.
func TestNeedsYouCountsEveryReason(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	h.send(tea.WindowSizeMsg{Width: 160, Height: 45})
	waiting := running("asker", "waiting", 2*time.Minute)
	stalled := running("quiet", "working", 12*time.Minute)
	stalled.LastOutput = t0.Add(-7 * time.Minute)
	crashed := running("crash", "offline", 0)
	crashed.Process, crashed.State, crashed.Exited, crashed.MeshSince = "exited 3", "exited", t0.Add(-90*time.Second), t0.Add(-90*time.Second)
	segv := running("segv", "offline", 0)
	segv.Process, segv.State, segv.Exited = "killed SIGSEGV", "exited", t0.Add(-30*time.Second)
	stopped := running("stopped", "offline", 0)
	stopped.Process, stopped.State, stopped.Exited, stopped.Stopped = "killed SIGTERM", "exited", t0.Add(-time.Minute), true
	done := running("done", "offline", 0)
	done.Process, done.State, done.Exited = "exited 0", "exited", t0.Add(-time.Minute)
	held := running("typed", "idle", time.Minute)
	held.Held, held.Waiting, held.OldestWaiting = "person typing", 2, t0.Add(-40*time.Second)
	calm := running("calm", "working", time.Minute)
	h.batch(0, batchMsg{
		PeersChanged: true, Peers: []presence.Peer{
			peer("quiet", presence.Working, 12*time.Minute),
			peer("crash", presence.Offline, 90*time.Second, offline(presence.ReasonSaidOffline)),
			peer("calm", presence.Working, time.Minute),
		},
		SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{waiting, stalled, crashed, segv, stopped, done, held, calm}},
	})
	var got []string
	for _, e := range h.m.needs.waiting {
		got = append(got, e.name+":"+e.need.word())
	}
	if want := "quiet:stalled,asker:waiting,crash:crashed,typed:held,segv:crashed"; strings.Join(got, ",") != want {
		t.Errorf("lane %s, want %s (oldest first)", strings.Join(got, ","), want)
	}
	s := h.screen()
	if !strings.Contains(s, "NEEDS YOU · 5") {
		t.Errorf("the lane does not count five:\n%s", s)
	}
	for name, want := range map[string]string{
		"quiet": "⧗ quiet  stalled 7m  working 12m, no output for 7m",
		"asker": "◐ asker  waiting 2m  waiting for input",
		"crash": "! crash  crashed 1m  exited 3",
		"segv":  "! segv  crashed 30s  killed SIGSEGV",
		"typed": "✎ typed  held 40s  person typing, 2 waiting",
	} {
		if l := laneLine(s, name); !strings.HasPrefix(l, want) {
			t.Errorf("lane line for %s is %q, want %q", name, l, want)
		}
	}
	for name, want := range map[string]string{
		"quiet":   "⧗ quiet",
		"crash":   "! crash        exited 3",
		"stopped": "⨯ stopped      killed TERM",
		"done":    "⨯ done         exited 0",
		"calm":    "● calm",
	} {
		if l := seatRow(s, name); !strings.HasPrefix(strings.Replace(l, "›", "", 1), want) { // the cursor may sit on it
			t.Errorf("seat row %q does not start %q", l, want)
		}
	}
	if l := seatRow(s, "typed"); !strings.HasPrefix(l, "✎ typed") || !strings.Contains(l, " held: person typing, 2 waiting") {
		t.Errorf("the held seat's row %q does not say so", l)
	}
	if l := rosterLine(s, "quiet"); !strings.HasPrefix(l, "⧗ quiet") || !strings.Contains(l, "working · stalled 7m") {
		t.Errorf("the stalled peer's roster row %q", l)
	}
	if l := rosterLine(s, "crash"); !strings.HasPrefix(l, "! crash") || !strings.Contains(l, "crashed (exited 3)") {
		t.Errorf("the crashed peer's roster row %q", l)
	}
	if l := rosterLine(s, "calm"); !strings.HasPrefix(l, "● ") {
		t.Errorf("a working peer with output is no longer a dot: %q", l)
	}
	h.batch(0, batchMsg{Shot: &screenShot{Name: "calm", Manager: "m1", Screen: Screen{Running: true, Text: "$ make -j4\ncompiling parser.go\n"}}})
	golden(t, "needs", h.screen())
}

// A seat that newly needs its person rings the bell and raises one
// notification naming it and why; the first census raises none, and each
// setting turns its own alert off.
func TestANewNeedRingsAndNotifies(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cfg     Config
		bells   int
		notices int
	}{
		{"both", Config{Bell: true, Notify: Notify{Via: NotifyOSC9}}, 1, 1},
		{"no notify", Config{Bell: true}, 1, 0},
		{"no bell", Config{Notify: Notify{Via: NotifySend}}, 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := seatHarness(t, tt.cfg)
			up := running("crash", "idle", time.Minute)
			h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{up, running("old", "waiting", time.Hour)}}})
			if h.bells != 0 || len(h.notices) != 0 {
				t.Fatalf("alerted for a seat waiting before the dashboard looked: %d bells, %q", h.bells, h.notices)
			}
			down := up
			down.Process, down.State, down.Exited = "exited 3", "exited", t0.Add(time.Second)
			for i := range 3 {
				h.batch(time.Duration(i+1)*time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{down, running("old", "waiting", time.Hour)}}})
			}
			if h.bells != tt.bells || len(h.notices) != tt.notices {
				t.Fatalf("%d bells and %d notifications %q, want %d and %d", h.bells, len(h.notices), h.notices, tt.bells, tt.notices)
			}
			if tt.notices > 0 && h.notices[0] != "cotal · default|crash needs you: crashed 0s, exited 3" {
				t.Errorf("notification %q", h.notices[0])
			}
		})
	}
}

// A stop that ends a seat with a signal is no crash; the same signal with
// no stop is one.
func TestStoppedIsNoCrash(t *testing.T) {
	for _, tt := range []struct {
		process string
		stopped bool
		crash   bool
	}{
		{"running", false, false},
		{"exited 0", false, false},
		{"exited 1", false, true},
		{"exited 143", true, false},
		{"killed SIGKILL", false, true},
		{"killed SIGKILL", true, false},
		{"killed SIGSEGV", false, true},
		{"", false, false},
	} {
		s := Seat{Process: tt.process, Stopped: tt.stopped}
		if _, crash := s.crash(); crash != tt.crash {
			t.Errorf("%q stopped=%v: crash %v, want %v", tt.process, tt.stopped, crash, tt.crash)
		}
	}
}

// A working seat is stalled after StallAfter without output, counted from
// its last output or, when it never printed, from its start.
func TestStalledCountsFromTheLastOutputOrTheStart(t *testing.T) {
	for _, tt := range []struct {
		name            string
		mesh            string
		started, output time.Duration // before t0; 0: none
		want            bool
	}{
		{"quiet 7m", "working", time.Hour, 7 * time.Minute, true},
		{"quiet 5m exactly", "working", time.Hour, 5 * time.Minute, false},
		{"never printed, 7m up", "working", 7 * time.Minute, 0, true},
		{"never printed, 1m up", "working", time.Minute, 0, false},
		{"idle and quiet", "idle", time.Hour, time.Hour, false},
	} {
		s := Seat{Process: "running", Mesh: tt.mesh, Started: t0.Add(-tt.started)}
		if tt.output > 0 {
			s.LastOutput = t0.Add(-tt.output)
		}
		if _, got := s.stalled(t0); got != tt.want {
			t.Errorf("%s: stalled %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A seat whose harness waits on its person is in the lane with what it
// asks and for how long, on its harness's word even before it is on the
// roster; p asks y/n and sends the answer through the manager, and a
// question cotal cannot answer says to attach.
func TestNeedsYouShowsWhatAHarnessAsksAndPAnswersIt(t *testing.T) {
	h, f := seatHarness(t, Config{Notify: Notify{Via: NotifyOSC9}})
	h.send(tea.WindowSizeMsg{Width: 240, Height: 45})
	calm := running("calm", "idle", time.Minute)
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{calm}}})
	cc := running("cc", "waiting", 40*time.Second)
	cc.Harness, cc.Agent, cc.Asks, cc.AsksSince, cc.Answerable = "claude", "waiting", "approve Bash(touch run-bbb2)", t0.Add(-40*time.Second), true
	starting := running("boot", "offline", 0)
	starting.State, starting.Harness, starting.Agent, starting.Asks, starting.AsksSince = "starting", "claude", "waiting", "Make auto mode your default permission mode?", t0.Add(-5*time.Second)
	h.batch(time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{calm, cc}}})
	h.batch(time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{calm, cc, starting}}})
	s := h.screen()
	if l := laneLine(s, "cc"); !strings.HasPrefix(l, "◐ cc  waiting 41s  p:  approve Bash(touch run-bbb2)") {
		t.Errorf("lane line for cc is %q", l)
	}
	if l := laneLine(s, "boot"); !strings.HasPrefix(l, "◐ boot  waiting 6s  Make auto mode your default permission mode?") || strings.Contains(l, "p:") {
		t.Errorf("lane line for the seat at a start-up dialog is %q", l)
	}
	if len(h.notices) != 2 || !strings.HasSuffix(h.notices[0], "|cc needs you: waiting 41s, approve Bash(touch run-bbb2)") {
		t.Errorf("notifications %q", h.notices)
	}
	// p on the waiting seat: a question, then y answers allow.
	h.m.setPanel(panelSeats)
	pick := func(name string) {
		t.Helper()
		h.keys("g")
		for range 5 {
			if s, ok := h.m.seats.selected(); ok && s.Name == name {
				return
			}
			h.keys("j")
		}
		t.Fatalf("no seat %s to select", name)
	}
	pick("cc")
	h.keys("p")
	if h.m.mode != modeAnswer || !strings.Contains(h.screen(), "cc ASKS: approve Bash(touch run-bbb2)") {
		t.Fatalf("p opened no question:\n%s", h.screen())
	}
	h.run(h.keys("y"))
	if got := f.log(); !strings.Contains(got, "answer cc@m1 allow") {
		t.Fatalf("y sent %q", got)
	}
	if !strings.Contains(h.screen(), "approved cc: approve Bash(touch run-bbb2)") {
		t.Errorf("no receipt of the answer in the status bar:\n%s", h.screen())
	}
	// The start-up dialog is no question cotal answers.
	pick("boot")
	h.keys("p")
	if h.m.mode == modeAnswer || !strings.Contains(h.screen(), "a attaches to answer it") {
		t.Errorf("p on a dialog cotal cannot answer:\n%s", h.screen())
	}
}

// A seat whose spawn ended uncertain (running, never shown up) needs its
// person: it is in the lane, with what to do. It was not.
func TestNeedsYouListsAnUncertainSpawn(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	h.send(tea.WindowSizeMsg{Width: 160, Height: 45})
	unsure := running("unsure", "offline", 0)
	unsure.State, unsure.Started = "uncertain", t0.Add(-40*time.Second)
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{unsure}}})
	line := laneLine(h.screen(), "unsure")
	if !strings.HasPrefix(line, "? unsure  uncertain 40s  spawn never came up") {
		t.Errorf("the lane's line for an uncertain spawn: %q\n%s", line, h.screen())
	}
}

// Stalled is not only for a seat that says it is working: one whose
// connector has messages waiting to be typed into it, silent for over
// StallAfter, is stalled whatever its mesh status says; one that reads
// its inbox itself, or whose person holds them, is not.
func TestStalledWhateverTheMeshStatus(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	h.send(tea.WindowSizeMsg{Width: 160, Height: 45})
	stuck := running("stuck", "idle", 12*time.Minute)
	stuck.LastOutput, stuck.Injects, stuck.Waiting = t0.Add(-7*time.Minute), true, 2
	reader := running("reader", "idle", 12*time.Minute)
	reader.LastOutput, reader.Waiting = t0.Add(-7*time.Minute), 2 // reads cotal inbox itself
	held := running("held", "waiting", 12*time.Minute)
	held.LastOutput, held.Injects, held.Waiting, held.Held = t0.Add(-7*time.Minute), true, 1, "person typing"
	h.batch(0, batchMsg{
		PeersChanged: true, Peers: []presence.Peer{peer("stuck", presence.Idle, 12*time.Minute)},
		SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{stuck, reader, held}},
	})
	s := h.screen()
	if l := laneLine(s, "stuck"); !strings.HasPrefix(l, "⧗ stuck  stalled 7m  2 waiting, no output for 7m") {
		t.Errorf("the lane's line for an idle seat with messages waiting: %q\n%s", l, s)
	}
	if l := strings.Replace(rosterLine(s, "stuck"), "›", "", 1); !strings.HasPrefix(l, "⧗ stuck") || !strings.Contains(l, "idle · stalled 7m") {
		t.Errorf("its roster row: %q", l)
	}
	for _, name := range []string{"reader"} {
		if l := laneLine(s, name); l != "" {
			t.Errorf("%s is in the lane: %q", name, l)
		}
	}
	if l := laneLine(s, "held"); strings.Contains(l, "stalled") {
		t.Errorf("a seat whose person holds its messages is called stalled: %q", l)
	}
}
