package attach_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/seat/attach"
)

// peer is the far side of a rail, spoken raw: it records what the rail
// sends and publishes frames of its own choosing.
type peer struct {
	t       *testing.T
	nc      *nats.Conn
	in, out string // the rail's in (peer publishes) and out (peer reads)
	mu      sync.Mutex
	frames  []map[string]any
}

func (p *peer) send(frame string) {
	p.t.Helper()
	if err := p.nc.Publish(p.in, []byte(frame)); err != nil {
		p.t.Fatal(err)
	}
}

func (p *peer) data(seq int, ack int) {
	p.t.Helper()
	if ack >= 0 {
		p.send(fmt.Sprintf(`{"t":"f","seq":%d,"ack":%d,"data":{"n":%d}}`, seq, ack, seq))
	} else {
		p.send(fmt.Sprintf(`{"t":"f","seq":%d,"data":{"n":%d}}`, seq, seq))
	}
}

func (p *peer) seen() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.frames...)
}

// credits are the acks of the credit frames the rail has sent.
func (p *peer) credits() []int {
	var out []int
	for _, f := range p.seen() {
		if f["t"] == "credit" {
			out = append(out, int(f["ack"].(float64)))
		}
	}
	return out
}

var railSeq int

// openRail opens a rail on an open broker with a raw peer. handler nil
// accepts everything.
func openRail(t *testing.T, window int, handler func(json.RawMessage) error, opts attach.RailOptions) (*attach.Rail, *peer) {
	t.Helper()
	b, nc := testmesh.Start(t, space, true)
	_ = b
	railSeq++
	base := fmt.Sprintf("cotal.%s.eps.manager.rail%d.", space, railSeq)
	p := &peer{t: t, nc: nc, in: base + "in", out: base + "out"}
	sub, err := nc.Subscribe(p.out, func(m *nats.Msg) {
		var f map[string]any
		if err := json.Unmarshal(m.Data, &f); err != nil {
			t.Errorf("rail sent a non-JSON frame %q", m.Data)
			return
		}
		p.mu.Lock()
		p.frames = append(p.frames, f)
		p.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if handler == nil {
		handler = func(json.RawMessage) error { return nil }
	}
	r, err := attach.OpenRail(testmesh.Ctx(t), nc, p.out, p.in, window, handler, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r, p
}

func waitFault(t *testing.T, r *attach.Rail, want attach.Fault) {
	t.Helper()
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("rail still open; want fault %s", want)
	}
	var fe *attach.FaultError
	if !errors.As(r.Err(), &fe) || fe.Fault != want {
		t.Fatalf("rail ended with %v; want fault %s", r.Err(), want)
	}
}

func TestRailWindowAndAbsoluteAcks(t *testing.T) {
	r, p := openRail(t, 4, nil, attach.RailOptions{})
	for i := range 4 {
		if err := r.Send([]byte(fmt.Sprint(i))); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if err := r.Send([]byte("5")); !errors.Is(err, attach.ErrWindowFull) {
		t.Fatalf("fifth send into a window of 4: %v; want ErrWindowFull", err)
	}
	p.send(`{"t":"credit","ack":2}`)
	testutil.WaitFor(t, 5*time.Second, func() error {
		if c := r.Credit(); c != 2 {
			return fmt.Errorf("credit %d; want 2", c)
		}
		return nil
	})
	// An older ack changes nothing; a piggybacked one counts.
	p.send(`{"t":"credit","ack":1}`)
	p.data(1, 3)
	testutil.WaitFor(t, 5*time.Second, func() error {
		if st := r.Stats(); st.AckedThrough != 3 || st.InFlight != 1 {
			return fmt.Errorf("stats %+v; want acked through 3, 1 in flight", st)
		}
		return nil
	})
	// The frames carry seq 1..4 and data as sent.
	testutil.WaitFor(t, 5*time.Second, func() error {
		var seqs []int
		for _, f := range p.seen() {
			if f["t"] == "f" {
				seqs = append(seqs, int(f["seq"].(float64)))
			}
		}
		if fmt.Sprint(seqs) != "[1 2 3 4]" {
			return fmt.Errorf("seqs %v", seqs)
		}
		return nil
	})
}

// Credit goes back every ceil(window/2) frames handled, as the absolute
// count handled, and a data frame sent back carries it too.
func TestRailCreditEveryHalfWindow(t *testing.T) {
	r, p := openRail(t, 5, nil, attach.RailOptions{Idle: time.Hour})
	for seq := 1; seq <= 5; seq++ {
		p.data(seq, -1)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		if c := p.credits(); fmt.Sprint(c) != "[3]" {
			return fmt.Errorf("credits %v; want [3]", c)
		}
		return nil
	})
	p.data(6, -1)
	p.data(7, -1)
	testutil.WaitFor(t, 5*time.Second, func() error {
		if c := p.credits(); fmt.Sprint(c) != "[3 6]" {
			return fmt.Errorf("credits %v; want [3 6]", c)
		}
		return nil
	})
	testutil.WaitFor(t, 5*time.Second, func() error {
		if st := r.Stats(); st.Delivered != 7 {
			return fmt.Errorf("delivered %d", st.Delivered)
		}
		return nil
	})
	if err := r.Send([]byte(`"x"`)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		f := p.seen()
		last := f[len(f)-1]
		if last["t"] != "f" || last["ack"] != float64(7) {
			return fmt.Errorf("last frame %v; want a data frame carrying ack 7", last)
		}
		return nil
	})
}

// A quiet rail re-advertises its ack every idle interval.
func TestRailIdleReadvertises(t *testing.T) {
	_, p := openRail(t, 4, nil, attach.RailOptions{Idle: 30 * time.Millisecond})
	p.data(1, -1)
	testutil.WaitFor(t, 5*time.Second, func() error {
		if c := p.credits(); len(c) < 3 || c[len(c)-1] != 1 {
			return fmt.Errorf("credits %v; want several, the last acking 1", c)
		}
		return nil
	})
}

func TestRailFaults(t *testing.T) {
	tests := []struct {
		name   string
		window int
		prep   func(r *attach.Rail)
		frames []string
		want   attach.Fault
	}{
		{name: "gap", window: 4, frames: []string{`{"t":"f","seq":2,"data":1}`}, want: attach.FaultGap},
		{name: "gap after one", window: 4, frames: []string{`{"t":"f","seq":1,"data":1}`, `{"t":"f","seq":3,"data":1}`}, want: attach.FaultGap},
		{name: "ack for frames never sent", window: 4, frames: []string{`{"t":"credit","ack":1}`}, want: attach.FaultCreditOverrun},
		{name: "piggybacked ack past sent", window: 4, prep: func(r *attach.Rail) { _ = r.Send([]byte("1")) }, frames: []string{`{"t":"f","seq":1,"ack":2,"data":1}`}, want: attach.FaultCreditOverrun},
		{name: "past the window", window: 2, frames: []string{`{"t":"f","seq":1,"data":1}`, `{"t":"f","seq":2,"data":1}`, `{"t":"f","seq":3,"data":1}`}, want: attach.FaultCreditOverrun},
		{name: "not JSON", window: 4, frames: []string{`hello`}, want: attach.FaultGarbled},
		{name: "unknown type", window: 4, frames: []string{`{"t":"x"}`}, want: attach.FaultGarbled},
		{name: "unknown member", window: 4, frames: []string{`{"t":"credit","ack":0,"more":1}`}, want: attach.FaultGarbled},
		{name: "seq zero", window: 4, frames: []string{`{"t":"f","seq":0,"data":1}`}, want: attach.FaultGarbled},
		{name: "fractional seq", window: 4, frames: []string{`{"t":"f","seq":1.0,"data":1}`}, want: attach.FaultGarbled},
		{name: "no data", window: 4, frames: []string{`{"t":"f","seq":1}`}, want: attach.FaultGarbled},
		{name: "seq past 2^53", window: 4, frames: []string{`{"t":"f","seq":9007199254740993,"data":1}`}, want: attach.FaultGarbled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The handler holds the frames, so none is acknowledged.
			hold := make(chan struct{})
			defer close(hold)
			r, p := openRail(t, tt.window, func(json.RawMessage) error { <-hold; return nil }, attach.RailOptions{Idle: time.Hour})
			if tt.prep != nil {
				tt.prep(r)
			}
			for _, f := range tt.frames {
				p.send(f)
			}
			waitFault(t, r, tt.want)
			if err := r.Send([]byte("1")); !errors.Is(err, attach.ErrRailClosed) {
				t.Errorf("send after the fault: %v; want ErrRailClosed", err)
			}
			// The other side hears of the fault at once, not after its
			// 30 s stall watchdog.
			testutil.WaitFor(t, 5*time.Second, func() error {
				f := p.seen()
				if len(f) == 0 || f[len(f)-1]["t"] != "close" {
					return fmt.Errorf("frames %v; want a close after the fault", f)
				}
				return nil
			})
		})
	}
}

func TestRailHandlerErrorBreaksIt(t *testing.T) {
	r, p := openRail(t, 4, func(json.RawMessage) error { return errors.New("no") }, attach.RailOptions{})
	p.data(1, -1)
	waitFault(t, r, attach.FaultHandler)
}

// The server's side drops what it cannot read and goes on; so does every
// side for a message carrying headers, which only the broker could have
// put there.
func TestRailDropsGarbledAndForeign(t *testing.T) {
	var mu sync.Mutex
	var got []string
	r, p := openRail(t, 4, func(d json.RawMessage) error {
		mu.Lock()
		got = append(got, string(d))
		mu.Unlock()
		return nil
	}, attach.RailOptions{DropGarbled: true})
	p.send(`garbage`)
	p.send(`{"t":"f","seq":"1","data":1}`)
	m := nats.NewMsg(p.in)
	m.Header.Set("Nats-Stream", "KV_x")
	m.Data = []byte(`{"t":"f","seq":1,"data":"forged"}`)
	if err := p.nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	p.send(`{"t":"f","seq":1,"data":"real"}`)
	testutil.WaitFor(t, 5*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(got) != `["real"]` {
			return fmt.Errorf("handled %v; want only the real frame", got)
		}
		return nil
	})
	if st := r.Stats(); st.Garbled != 2 || st.Foreign != 1 {
		t.Errorf("stats %+v; want 2 garbled, 1 foreign", st)
	}
	select {
	case <-r.Done():
		t.Fatalf("rail closed: %v", r.Err())
	default:
	}
}

func TestRailStallWhenPeerSilent(t *testing.T) {
	r, _ := openRail(t, 4, nil, attach.RailOptions{Idle: 20 * time.Millisecond, Stall: 200 * time.Millisecond})
	waitFault(t, r, attach.FaultStall)
	if !strings.Contains(r.Err().Error(), "nothing from the other side") {
		t.Errorf("fault %v", r.Err())
	}
}

// A peer that keeps talking but never gives credit stalls the rail too.
func TestRailStallWhenWindowStaysFull(t *testing.T) {
	r, p := openRail(t, 2, nil, attach.RailOptions{Idle: 20 * time.Millisecond, Stall: 300 * time.Millisecond})
	_ = r.Send([]byte("1"))
	_ = r.Send([]byte("2"))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				_ = p.nc.Publish(p.in, []byte(`{"t":"credit","ack":0}`))
			}
		}
	}()
	waitFault(t, r, attach.FaultStall)
	if !strings.Contains(r.Err().Error(), "window full") {
		t.Errorf("fault %v", r.Err())
	}
}

// A peer that keeps talking and acks all but one frame of a window, while
// the sender holds back for two, stalls the rail too: a drop notice that
// waits for room for the screen after it must not wait for ever.
func TestRailStallWhenCreditStaysShort(t *testing.T) {
	r, p := openRail(t, 3, nil, attach.RailOptions{Idle: 20 * time.Millisecond, Stall: 300 * time.Millisecond})
	for _, d := range []string{"1", "2", "3"} {
		if err := r.Send([]byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				_ = p.nc.Publish(p.in, []byte(`{"t":"credit","ack":1}`))
			}
		}
	}()
	testutil.WaitFor(t, 5*time.Second, func() error {
		if c := r.Credit(); c != 1 {
			return fmt.Errorf("credit %d, want 1", c)
		}
		return nil
	})
	if r.Reserve(2) {
		t.Fatal("two frames fit in a credit of one")
	}
	waitFault(t, r, attach.FaultStall)
	if !strings.Contains(r.Err().Error(), "short of what waits") {
		t.Errorf("fault %v", r.Err())
	}
}

// What the peer sent before its close is still handled, then the rail
// ends as closed by the peer.
func TestRailPeerCloseAfterData(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	n := 0
	r, p := openRail(t, 4, func(json.RawMessage) error {
		<-release
		mu.Lock()
		n++
		mu.Unlock()
		return nil
	}, attach.RailOptions{})
	p.data(1, -1)
	p.data(2, -1)
	p.send(`{"t":"close"}`)
	p.data(3, -1) // after the close: ignored
	if err := p.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	close(release)
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("rail did not end after the peer's close")
	}
	if !errors.Is(r.Err(), attach.ErrPeerClosed) {
		t.Fatalf("Err %v; want ErrPeerClosed", r.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 2 {
		t.Fatalf("handled %d frames; want the 2 sent before the close", n)
	}
}

func TestRailCloseSendsClose(t *testing.T) {
	r, p := openRail(t, 4, nil, attach.RailOptions{})
	r.Close()
	r.Close()
	testutil.WaitFor(t, 5*time.Second, func() error {
		f := p.seen()
		if len(f) == 0 || f[len(f)-1]["t"] != "close" {
			return fmt.Errorf("frames %v; want a close", f)
		}
		return nil
	})
	if r.Err() != nil {
		t.Fatalf("Err after a local close: %v", r.Err())
	}
	if err := r.Send([]byte("1")); !errors.Is(err, attach.ErrRailClosed) {
		t.Fatalf("send after close: %v", err)
	}
}

func TestRailFrameTooLarge(t *testing.T) {
	r, _ := openRail(t, 4, nil, attach.RailOptions{MaxFrame: 100})
	if err := r.Send([]byte(`"` + strings.Repeat("x", 100) + `"`)); !errors.Is(err, attach.ErrFrameTooLarge) {
		t.Fatalf("send of 100+ bytes with a 100-byte bound: %v", err)
	}
	if err := r.Send([]byte(`"small"`)); err != nil {
		t.Fatalf("the rail should live on: %v", err)
	}
}

func TestRailSeqExhausted(t *testing.T) {
	r, p := openRail(t, 4, nil, attach.RailOptions{})
	r.SetSentForTest(attach.MaxSafeInt - 2)
	if err := r.Send([]byte("1")); err != nil {
		t.Fatalf("the last seq: %v", err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		f := p.seen()
		if len(f) == 0 || f[len(f)-1]["seq"] != float64(attach.MaxSafeInt-1) {
			return fmt.Errorf("frames %v", f)
		}
		return nil
	})
	if err := r.Send([]byte("2")); !errors.Is(err, attach.ErrRailClosed) {
		t.Fatalf("send past the sequence space: %v", err)
	}
	waitFault(t, r, attach.FaultSeqExhausted)
}
