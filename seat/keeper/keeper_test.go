package keeper_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/procid"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/seat/keeper"
	"github.com/cotal-go/cotal/seat/pty"
	"github.com/cotal-go/cotal/seat/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // this binary is the keeper the tests start
	os.Exit(m.Run())
}

// startKeeper starts a keeper of sh -c script in a fresh directory and
// reaps it when the test ends, killing it first if it still runs.
func startKeeper(t *testing.T, ring int, script string) (string, *keeper.Started) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "k")
	sh, _ := exec.LookPath("sh")
	st, err := keeper.Start(t.Context(), exe, dir, keeper.Plan{
		Path: sh, Argv0: "sh", Args: []string{"-c", script}, Env: []string{"PATH=" + os.Getenv("PATH"), "PS1=$ "}, Ring: ring,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = st.Record.Keeper.Signal(syscall.SIGKILL)
		_ = st.Record.Seat.Signal(syscall.SIGKILL)
		_ = st.Wait()
	})
	return dir, st
}

// attach dials dir's keeper and makes a Seat of it.
func attach(t *testing.T, dir, instance string) (*pty.Seat, keeper.Welcome) {
	t.Helper()
	c, w, err := keeper.Dial(dir, instance)
	if err != nil {
		t.Fatal(err)
	}
	s, err := pty.Remote(c, pty.RemoteInfo{PID: w.Seat.PID, Started: time.UnixMilli(w.StartedMs), Cols: w.Cols, Rows: w.Rows, LastOutput: msTime(w.LastOutMs)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Detach)
	return s, w
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func waitScreen(t *testing.T, s *pty.Seat, want string) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, func() error {
		if !strings.Contains(s.Screen(), want) {
			return fmt.Errorf("screen lacks %q:\n%s", want, s.Screen())
		}
		return nil
	})
}

// A seat in a keeper is typed into and drawn like a child's; a manager
// that lets go and another that connects later finds it running, painted
// as it is, with what it wrote meanwhile counted.
func TestKeeperHoldsTheSeatAcrossManagers(t *testing.T) {
	dir, st := startKeeper(t, 4096, `exec sh -i`)
	s, w := attach(t, dir, "m1")
	if w.Detached != nil {
		t.Errorf("the first manager is told of output written while detached: %+v", w.Detached)
	}
	if w.Seat != st.Record.Seat || !w.Seat.Alive() {
		t.Errorf("welcome names seat %v, record %v", w.Seat, st.Record.Seat)
	}
	if _, err := s.Paste("echo one-$((1+1))", true); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, "one-2")

	// The manager goes (as a kill -9 would take it): the seat runs on,
	// and what it writes now is kept.
	s.Detach()
	if !errors.Is(s.Lost(), pty.ErrDetached) {
		t.Errorf("a detached seat's Lost is %v", s.Lost())
	}
	if !st.Record.Seat.Alive() {
		t.Fatal("the seat died with its manager's connection")
	}
	// A second manager types a flood while the first is away; the third
	// one sees the screen it left, and the count of what was dropped.
	s2, _ := attach(t, dir, "m2")
	// The flood waits for the keeper to have seen its manager go.
	tmp := t.TempDir()
	trigger, flooded := filepath.Join(tmp, "go"), filepath.Join(tmp, "flooded")
	if _, err := s2.Paste(`while [ ! -e `+trigger+` ]; do sleep 0.01; done; i=0; while [ $i -lt 3000 ]; do echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done; echo flood-$((6*7)); : > `+flooded, true); err != nil {
		t.Fatal(err)
	}
	s2.Detach()
	testutil.WaitFor(t, 10*time.Second, func() error {
		b, _ := os.ReadFile(filepath.Join(dir, "keeper.log"))
		if !strings.Contains(string(b), "manager m2 disconnected") {
			return fmt.Errorf("keeper log:\n%s", b)
		}
		return nil
	})
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, func() error {
		_, err := os.Stat(flooded)
		return err
	})
	s3, w3 := attach(t, dir, "m3")
	waitScreen(t, s3, "line-2999-")
	waitScreen(t, s3, "flood-42")
	if w3.Detached == nil || w3.Detached.Dropped == 0 || w3.Detached.Kept != 4096 {
		t.Errorf("detached account %+v; want 4096 bytes kept and the rest dropped", w3.Detached)
	}
	// Input and signals work through the new manager.
	if _, err := s3.Paste("echo back-$((3*3))", true); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s3, "back-9")
}

// kill -9 of a keeper loses its seat: the seat's process is found by the
// identity recorded and ended, with its background job.
func TestLostKeeperOrphanEnded(t *testing.T) {
	dir, st := startKeeper(t, 0, `trap '' HUP; sleep 1000 & echo job=$!; while :; do sleep 1; done`)
	s, _ := attach(t, dir, "m1")
	waitScreen(t, s, "job=")
	if err := st.Record.Keeper.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = st.Wait()
	<-s.Done()
	if !errors.Is(s.Lost(), keeper.ErrLost) {
		t.Errorf("Lost %v, want ErrLost", s.Lost())
	}
	lost, rec := keeper.Lost(dir)
	if !lost {
		t.Fatal("a killed keeper is not lost")
	}
	if !rec.Seat.Alive() {
		t.Fatal("the seat ignoring SIGHUP died anyway: nothing to test")
	}
	members := procid.Session(rec.Seat.PID)
	if len(members) == 0 {
		t.Fatal("no background job in the seat's session")
	}
	if n := keeper.EndOrphan(rec); n == 0 {
		t.Fatal("EndOrphan signalled nothing")
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		if rec.Seat.Alive() {
			return fmt.Errorf("seat %v still alive", rec.Seat)
		}
		for _, m := range members {
			if m.Alive() {
				return fmt.Errorf("session member %v still alive", m)
			}
		}
		return nil
	})
}

// A seat's end is told to its manager with the code, and recorded for a
// manager that was not there.
func TestKeeperExit(t *testing.T) {
	dir, st := startKeeper(t, 0, `read x; echo bye; exit 7`)
	s, _ := attach(t, dir, "m1")
	if _, err := s.Write([]byte("go\r")); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	if code, sig, _ := s.ExitStatus(); code != 7 || sig != "" || s.Lost() != nil {
		t.Errorf("exit %d %q lost %v; want 7", code, sig, s.Lost())
	}
	if err := st.Wait(); err != nil {
		t.Errorf("keeper exit: %v", err)
	}
	x, err := keeper.ReadExit(dir)
	if err != nil || x.Code != 7 || !strings.Contains(strings.Join(x.Tail, "\n"), "bye") {
		t.Errorf("exit record %+v (%v)", x, err)
	}
}

// The seat starts with the signal dispositions a program expects, not the
// keeper's: a hang-up or an interrupt ends a program that does not handle
// them (an interactive sh hung up by a graceful stop).
func TestSeatDoesNotInheritTheKeepersIgnoredSignals(t *testing.T) {
	dir, _ := startKeeper(t, 0, `grep SigIgn /proc/self/status; exec sleep 1000`)
	s, _ := attach(t, dir, "m1")
	waitScreen(t, s, "SigIgn:")
	var mask uint64
	for _, l := range strings.Split(s.Screen(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "SigIgn:"); ok {
			fmt.Sscanf(strings.TrimSpace(v), "%x", &mask)
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE} {
		if mask&(1<<(uint(sig)-1)) != 0 {
			t.Errorf("the seat starts with %v ignored (SigIgn %x)", sig, mask)
		}
	}
	if err := s.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a SIGHUP did not end the seat")
	}
	if _, sig, _ := s.ExitStatus(); sig != "SIGHUP" {
		t.Errorf("the seat ended with %q, want SIGHUP", sig)
	}
}

// A paste that takes several writes (its slices, then the Enter) reaches
// the seat through the keeper whole and in order, its Enter last, with
// every byte counted, though the manager sends all before any is typed.
func TestPasteInPartsThroughTheKeeper(t *testing.T) {
	out := filepath.Join(t.TempDir(), "line")
	dir, _ := startKeeper(t, 4096, `IFS= read -r line; printf %s "$line" > `+out+`; echo got-it; exec sleep 60`)
	s, _ := attach(t, dir, "m1")
	var b strings.Builder
	for i := 0; b.Len() < 3000; i++ {
		fmt.Fprintf(&b, "part%04d-", i)
	}
	text := b.String() // more than one PasteSlice, less than a tty line
	if len(text) <= pty.PasteSlice {
		t.Fatalf("the text (%d bytes) fits one slice", len(text))
	}
	n, err := s.Paste(text, true)
	if err != nil || n != len(text)+1 {
		t.Fatalf("paste took %d of %d bytes: %v", n, len(text)+1, err)
	}
	waitScreen(t, s, "got-it")
	got, err := os.ReadFile(out)
	if err != nil || string(got) != text {
		t.Fatalf("the seat read %d bytes (%v), want the %d pasted in order", len(got), err, len(text))
	}
}

// A manager types into a kept seat through the pty master its keeper
// hands over with the welcome, and through input frames when it has none;
// either way the seat gets the input. A manager superseded by another has
// its master closed: it types nothing more into the seat.
func TestTypingIntoAKeptSeat(t *testing.T) {
	dir, _ := startKeeper(t, 0, `exec sh -i`)
	for _, direct := range []bool{true, false} {
		restore := func() {}
		if !direct {
			restore = keeper.RefuseMaster()
		}
		c, w, err := keeper.Dial(dir, fmt.Sprintf("m-%v", direct))
		restore()
		if err != nil {
			t.Fatal(err)
		}
		if c.HasMaster() != direct || w.Master != true {
			t.Fatalf("direct %v: the manager holds the master: %v; the welcome offered it: %v", direct, c.HasMaster(), w.Master)
		}
		s, err := pty.Remote(c, pty.RemoteInfo{PID: w.Seat.PID, Started: time.UnixMilli(w.StartedMs), Cols: w.Cols, Rows: w.Rows})
		if err != nil {
			t.Fatal(err)
		}
		mark := fmt.Sprintf("typed-%v-$((2+3))", direct)
		if n, err := s.Paste("echo "+mark, true); err != nil || n != len("echo "+mark)+1 {
			t.Fatalf("direct %v: paste took %d bytes: %v", direct, n, err)
		}
		waitScreen(t, s, fmt.Sprintf("typed-%v-5", direct))
		s.Detach()
	}

	// Superseded: the first manager's master is closed once its keeper
	// hands the seat to the second; what it types after is refused and
	// never reaches the seat.
	c1, w1, err := keeper.Dial(dir, "first")
	if err != nil {
		t.Fatal(err)
	}
	s1, err := pty.Remote(c1, pty.RemoteInfo{PID: w1.Seat.PID, Started: time.UnixMilli(w1.StartedMs), Cols: w1.Cols, Rows: w1.Rows})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s1.Detach)
	s2, _ := attach(t, dir, "second")
	testutil.WaitFor(t, 10*time.Second, func() error {
		if c1.HasMaster() {
			return errors.New("the superseded manager still holds the master")
		}
		return nil
	})
	if _, err := s1.Paste("echo stale-$((4+4))", true); err == nil {
		t.Error("the superseded manager's paste was taken")
	}
	if _, err := s2.Paste("echo fresh-$((5+5))", true); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s2, "fresh-10")
	if strings.Contains(s2.Screen(), "stale-8") {
		t.Fatalf("the superseded manager typed into the seat:\n%s", s2.Screen())
	}
}
