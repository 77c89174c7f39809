package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh/presence"
)

// rosterLine is the screen line that shows name, or "".
func rosterLine(screen, name string) string {
	for _, l := range strings.Split(screen, "\n") {
		l, _, _ = strings.Cut(l, "│")
		if strings.Contains(l, " "+name+" ") || strings.Contains(l, "›"+name+" ") {
			return l
		}
	}
	return ""
}

func TestRosterSortsByStatusThenName(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	h.batch(0, batchMsg{PeersChanged: true, Peers: []presence.Peer{
		peer("zed", presence.Idle, time.Minute),
		peer("amy", presence.Offline, time.Minute, offline(presence.ReasonSilent)),
		peer("bea", presence.Waiting, time.Minute),
		peer("cal", presence.Working, time.Minute),
		peer("abe", presence.Working, time.Minute),
		peer("gear", presence.Idle, time.Minute, asEndpoint()),
	}})
	var got []string
	for _, p := range h.m.roster.peers {
		got = append(got, p.Name)
	}
	if want := "abe cal bea gear zed amy"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", strings.Join(got, " "), want)
	}
	s := h.screen()
	for name, glyph := range map[string]string{"abe": "●", "bea": "◐", "zed": "○", "amy": "⨯", "gear": "⚙"} {
		if l := rosterLine(s, name); !strings.HasPrefix(strings.TrimSpace(l), glyph) {
			t.Errorf("%s row %q does not start with %s", name, l, glyph)
		}
	}
	if !strings.Contains(s, "ROSTER · 5 agents · 1 endpoint") {
		t.Errorf("roster title missing counts:\n%s", s)
	}
}

func TestWorkingSaysStalledOrProgressUnknown(t *testing.T) {
	tests := []struct {
		name       string
		lastOutput time.Duration // before t0; 0: no seat observed
		want       string
	}{
		{"unobserved", 0, "working · progress unknown"},
		{"quiet for 7m", 7 * time.Minute, "working · stalled 7m"},
		{"quiet for 5m exactly", 5 * time.Minute, "working · output 5m ago"},
		{"quiet for 5m1s", 5*time.Minute + time.Second, "working · stalled 5m"},
		{"busy", 20 * time.Second, "working · output 20s ago"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestModel(t, Config{SeatSource: nil}, 120, 40)
			b := batchMsg{PeersChanged: true, Peers: []presence.Peer{peer("alice", presence.Working, 10*time.Minute)}}
			if tt.lastOutput > 0 {
				b.SeatsChanged, b.Census = true, Census{Managers: 1, Seats: []Seat{{Name: "alice", PeerID: "local.alice", State: "ready", Process: "running", LastOutput: t0.Add(-tt.lastOutput)}}}
			}
			h.batch(0, b)
			if l := rosterLine(h.screen(), "alice"); !strings.Contains(l, tt.want) {
				t.Errorf("row %q lacks %q", l, tt.want)
			}
		})
	}
}

func TestStaleViewSaysSoAndKeepsStatuses(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	peers := []presence.Peer{peer("alice", presence.Working, time.Minute), peer("bob", presence.Idle, time.Minute)}
	h.batch(0, batchMsg{PeersChanged: true, Peers: peers})
	lastHeard := t0.Add(2 * time.Second)
	h.batch(30*time.Second, batchMsg{View: presence.View{State: presence.Stale, StaleSince: lastHeard.Add(presence.TTL), LastDelivery: lastHeard}})
	s := h.screen()
	if !strings.Contains(s, "VIEW STALE since 12:00:08 (22s)") {
		t.Errorf("header does not say the view is stale since when:\n%s", s)
	}
	if strings.Contains(s, "⨯") || strings.Contains(s, "offline (") {
		t.Errorf("a stale view shows someone offline:\n%s", s)
	}
	h.batch(31*time.Second, batchMsg{})
	if strings.Contains(h.screen(), "VIEW STALE") {
		t.Error("header still stale after the view came back")
	}
}

func TestNeedsYouOldestFirstAndRingsOncePerEntry(t *testing.T) {
	h := newTestModel(t, Config{Bell: true}, 120, 40)
	h.batch(0, batchMsg{PeersChanged: true})
	if s := h.screen(); !strings.Contains(s, "nothing waiting - all clear") {
		t.Fatalf("empty lane not said:\n%s", s)
	}
	h.batch(time.Second, batchMsg{PeersChanged: true, Peers: []presence.Peer{
		peer("young", presence.Waiting, time.Minute), peer("old", presence.Waiting, 9*time.Minute, withActivity("approve rm -rf")),
	}})
	if h.bells != 1 {
		t.Errorf("bells = %d after two entered at once, want 1", h.bells)
	}
	var names []string
	for _, p := range h.m.needs.waiting {
		names = append(names, p.name)
	}
	if strings.Join(names, ",") != "old,young" {
		t.Errorf("lane order %v, want oldest first", names)
	}
	s := h.screen()
	if !strings.Contains(s, "NEEDS YOU · 2") || !strings.Contains(s, "old  waiting 9m  approve rm -rf") {
		t.Errorf("lane not shown with waits:\n%s", s)
	}
	h.batch(2*time.Second, batchMsg{PeersChanged: true, Peers: []presence.Peer{
		peer("young", presence.Waiting, time.Minute), peer("old", presence.Waiting, 9*time.Minute),
	}})
	if h.bells != 1 {
		t.Errorf("bells = %d with nobody new, want 1", h.bells)
	}
}

func TestNoBellForThoseAlreadyWaitingOrWhenOff(t *testing.T) {
	for _, bell := range []bool{true, false} {
		h := newTestModel(t, Config{Bell: bell}, 120, 40)
		h.batch(0, batchMsg{PeersChanged: true, Peers: []presence.Peer{peer("a", presence.Waiting, time.Minute)}})
		if h.bells != 0 {
			t.Errorf("bell=%v: rang for a peer waiting before the dashboard looked", bell)
		}
		h.batch(time.Second, batchMsg{PeersChanged: true, Peers: []presence.Peer{peer("a", presence.Waiting, time.Minute), peer("b", presence.Waiting, 0)}})
		if want := map[bool]int{true: 1, false: 0}[bell]; h.bells != want {
			t.Errorf("bell=%v: bells = %d, want %d", bell, h.bells, want)
		}
	}
}

func TestFeedFoldsBurstsDedupsAndTabs(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	h.batch(0, batchMsg{Count: 6, Posts: []Post{
		post("1", "general", "bob", "build failed", 0),
		post("2", "general", "bob", "build failed", 500*time.Millisecond),
		post("3", "general", "bob", "build failed", time.Second),
		post("4", "ops", "eve", "deploying", time.Second),
		post("1", "general", "bob", "build failed", 0), // the same id again (history and live)
		post("5", "general", "bob", "build failed", 10*time.Second),
	}})
	s := h.screen()
	if !strings.Contains(s, "#general bob: build failed ×3") {
		t.Errorf("burst not folded:\n%s", s)
	}
	if strings.Count(s, "build failed") != 2 {
		t.Errorf("want the folded burst and the later repeat, got:\n%s", s)
	}
	if !strings.Contains(s, "FEED  all │ #general │ #ops") {
		t.Errorf("tabs missing:\n%s", s)
	}
	h.keys("]", "]")
	s = h.screen()
	if h.m.feed.currentChannel() != "ops" || strings.Contains(s, "build failed") || !strings.Contains(s, "eve: deploying") {
		t.Errorf("the #ops tab shows other channels:\n%s", s)
	}
}

func TestComposeSendsAndShowsTheReceipt(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	h.keys("c", "#general hello there")
	cmd := h.keys("<enter>")
	if cmd == nil {
		t.Fatal("enter returned no send")
	}
	msg := cmd()
	if got := h.s.sent; len(got) != 1 || got[0] != (outgoing{Sigil: '#', To: "general", Text: "hello there"}) {
		t.Fatalf("sent %+v", got)
	}
	h.send(msg)
	s := h.screen()
	if !strings.Contains(s, "→ #general: stored seq 1") || !strings.Contains(s, "#general root: hello there") {
		t.Errorf("no receipt or own post:\n%s", s)
	}
	// The live copy of the same post (the endpoint keeps the operator's
	// echoes) is the same line, named the same way.
	h.batch(time.Second, batchMsg{Posts: []Post{{ID: "id1", Kind: "channel", Channel: "general", From: "root", FromID: "local.root", Text: "hello there", At: t0}}})
	if n := strings.Count(h.screen(), "hello there"); n != 1 {
		t.Errorf("own post shown %d times once its live copy came", n)
	}
	// The operator's own DMs and tasks are in the feed too.
	h.send(h.keys("c", "@bob are you there?", "<enter>")())
	h.send(h.keys("c", "!reviewer look at #4", "<enter>")())
	s = h.screen()
	if !strings.Contains(s, "DM root → bob: are you there?") || !strings.Contains(s, "@reviewer root: look at #4") {
		t.Errorf("the operator's DM or task is not in the feed:\n%s", s)
	}

	h.s.err = errors.New("not allowed to post to #secret")
	h.send(h.keys("c", "!reviewer check this", "<enter>")())
	if s := h.screen(); !strings.Contains(s, "✗ !reviewer: not allowed to post to #secret") {
		t.Errorf("error not in words:\n%s", s)
	}
}

func TestComposeEscapeAndBadLine(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	h.keys("c", "no target", "<enter>")
	if h.m.mode != modeCompose || !strings.Contains(h.screen(), "send> no target") {
		t.Errorf("a line without a target left compose mode or lost the text")
	}
	h.keys("<esc>")
	if h.m.mode != modeNormal {
		t.Error("esc did not leave compose mode")
	}
	h.keys("q") // q is a quit key only outside compose
	h.keys("c")
	if h.m.input.ti.Value() != "" {
		t.Errorf("compose prefilled %q on the all tab", h.m.input.ti.Value())
	}
}

func TestParseOutgoing(t *testing.T) {
	tests := []struct {
		line, def string
		want      outgoing
		wantErr   bool
	}{
		{"#general hi all", "", outgoing{'#', "general", "hi all"}, false},
		{"@bob are you there?", "", outgoing{'@', "bob", "are you there?"}, false},
		{"!reviewer look at #4", "", outgoing{'!', "reviewer", "look at #4"}, false},
		{"plain words", "ops", outgoing{'#', "ops", "plain words"}, false},
		{"plain words", "", outgoing{}, true},
		{"#general", "", outgoing{}, true},
		{"@ hi", "", outgoing{}, true},
		{"   ", "ops", outgoing{}, true},
	}
	for _, tt := range tests {
		got, err := parseOutgoing(tt.line, tt.def)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseOutgoing(%q, %q) = %+v, %v", tt.line, tt.def, got, err)
		}
	}
}

func TestFilterAndMove(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	h.batch(0, batchMsg{PeersChanged: true, Peers: []presence.Peer{
		peer("alice", presence.Idle, time.Minute), peer("alan", presence.Idle, time.Minute), peer("bob", presence.Idle, time.Minute, withRole("alpha")),
	}})
	h.keys("j", "j")
	if p, _ := h.m.roster.selected(); p.Name != "bob" {
		t.Errorf("j j selected %s", p.Name)
	}
	// Keys typed fast come in one message: each still counts.
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("gj")})
	if p, _ := h.m.roster.selected(); p.Name != "alice" {
		t.Errorf("g and j in one message selected %s, want alice", p.Name)
	}
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")})
	h.keys("k", "/", "ali", "<enter>")
	if n := len(h.m.roster.rows); n != 1 {
		t.Errorf("filter ali shows %d rows", n)
	}
	h.keys("/", "<esc>")
	h.keys("/", "al")
	if n := len(h.m.roster.rows); n != 3 { // alan, alice and bob (role alpha)
		t.Errorf("filter al shows %d rows, want 3", n)
	}
	h.keys("<esc>")
	if h.m.roster.filtering() || len(h.m.roster.rows) != 3 {
		t.Error("esc did not clear the filter")
	}
}

func TestQuitAsksAboutLiveSeats(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	if cmd := h.keys("q"); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q without ConfirmQuit did not quit")
	}
	live := []string{"alice"}
	h = newTestModel(t, Config{ConfirmQuit: func() []string { return live }}, 120, 40)
	h.send(h.keys("q")())
	if h.m.mode != modeConfirm || !strings.Contains(h.screen(), "1 seat still running: alice — stop it and quit? (y) / cancel (n)") {
		t.Fatalf("no confirmation:\n%s", h.screen())
	}
	h.keys("n")
	if h.m.mode != modeNormal {
		t.Fatal("n did not cancel")
	}
	h.send(h.keys("q")())
	if cmd := h.keys("y"); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("y did not quit")
	}
	live = nil
	h = newTestModel(t, Config{ConfirmQuit: func() []string { return live }}, 120, 40)
	if cmd := h.send(h.keys("q")()); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q with no live seats did not quit")
	}
}

func TestHelpAndResize(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	h.keys("?")
	if s := h.screen(); !strings.Contains(s, "KEYS") || !strings.Contains(s, "@name text") {
		t.Errorf("? shows no key list:\n%s", s)
	}
	h.keys("x")
	if h.m.mode != modeNormal {
		t.Error("a key did not close help")
	}
	h.send(tea.WindowSizeMsg{Width: 59, Height: 30})
	if s := h.screen(); s != "terminal too small (59x30), need 60x15" {
		t.Errorf("small screen: %q", s)
	}
	h.send(tea.WindowSizeMsg{Width: 60, Height: 15})
	if lines := strings.Split(h.screen(), "\n"); len(lines) != 15 {
		t.Errorf("60x15 screen has %d lines", len(lines))
	}
}

func TestRateAndSparkline(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	for i := range 10 {
		h.batch(time.Duration(i)*time.Second, batchMsg{Count: 20})
	}
	h.batch(10*time.Second, batchMsg{})
	if got := h.m.status.rate(); got != 20 {
		t.Errorf("rate = %v, want 20", got)
	}
	if s := h.m.status.View(); !strings.Contains(s, "20.0 msg/s") || !strings.Contains(s, "█") {
		t.Errorf("status bar: %q", s)
	}
}

func TestGoldenScreens(t *testing.T) {
	busy := []presence.Peer{
		peer("alice", presence.Working, 12*time.Minute, withRole("builder"), withHarness("claude"), withActivity("refactoring the parser")),
		peer("bob", presence.Working, 3*time.Minute, withHarness("codex")),
		peer("carol", presence.Waiting, 4*time.Minute, withRole("reviewer"), withActivity("needs approval to push")),
		peer("dave", presence.Idle, 40*time.Minute, withHarness("opencode")),
		peer("ci", presence.Idle, time.Hour, asEndpoint()),
		peer("erin", presence.Offline, 2*time.Hour, offline(presence.ReasonSaidOffline)),
	}
	seats := Census{Managers: 1, Seats: []Seat{
		{Name: "alice", PeerID: "local.alice", Harness: "claude", State: "ready", Process: "running", PID: 300, Started: t0.Add(-20 * time.Minute),
			LastOutput: t0.Add(-7 * time.Minute), Mesh: "working", MeshSince: t0.Add(-12 * time.Minute)},
		{Name: "shell", PeerID: "local.shell", Harness: "command", State: "ready", Process: "running", PID: 301, Started: t0.Add(-3 * time.Minute),
			LastOutput: t0.Add(-2 * time.Second)},
		{Name: "old", PeerID: "local.old", Harness: "command", State: "exited", Process: "exited 0", PID: 250, Started: t0.Add(-time.Hour),
			Exited: t0.Add(-30 * time.Minute), Mesh: "offline", MeshSince: t0.Add(-30 * time.Minute)},
	}}
	posts := []Post{
		post("1", "general", "alice", "starting on the parser", -5*time.Minute),
		post("2", "ci", "ci", "build 41 failed", -time.Minute),
		post("3", "ci", "ci", "build 41 failed", -time.Minute+time.Second),
		post("4", "general", "carol", "can someone approve my push?", -30*time.Second),
	}
	t.Run("normal", func(t *testing.T) {
		h := newTestModel(t, Config{}, 120, 32)
		h.batch(0, batchMsg{PeersChanged: true, Peers: busy, SeatsChanged: true, Census: seats, Posts: posts, Count: 4,
			Shot: &screenShot{Name: "alice", Screen: Screen{Running: true, Text: "$ make test\nok  \tparser\t0.4s\n$ \n\n\n"}}})
		golden(t, "normal", h.screen())
	})
	t.Run("stale", func(t *testing.T) {
		h := newTestModel(t, Config{Hosting: false, Space: "work", Mode: "open", Sync: "interval", URL: "nats://127.0.0.1:4300", PID: 99}, 100, 24)
		h.batch(0, batchMsg{PeersChanged: true, Peers: busy})
		h.batch(45*time.Second, batchMsg{View: presence.View{State: presence.Stale, StaleSince: t0.Add(8 * time.Second), LastDelivery: t0.Add(2 * time.Second)}})
		golden(t, "stale", h.screen())
	})
	t.Run("too_small", func(t *testing.T) {
		h := newTestModel(t, Config{}, 40, 10)
		golden(t, "too_small", h.screen())
	})
	t.Run("empty", func(t *testing.T) {
		h := newTestModel(t, Config{}, 80, 20)
		h.batch(0, batchMsg{PeersChanged: true})
		golden(t, "empty", h.screen())
	})
}
