package mesh_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// cutProxy stands between a client and the broker: it forwards both ways
// until told to swallow what the broker says (its acks among it), then
// cuts every connection at once, as a mesh killed with -9 does.
type cutProxy struct {
	ln      net.Listener
	target  string
	mute    atomic.Bool  // drop broker-to-client bytes
	dropped atomic.Int64 // bytes dropped since mute
	mu      sync.Mutex
	conns   []net.Conn
}

func newCutProxy(t *testing.T, brokerURL string) *cutProxy {
	t.Helper()
	u, err := url.Parse(brokerURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: u.Host}
	t.Cleanup(p.cut)
	go p.serve()
	return p
}

func (p *cutProxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, b)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(b, c) }()
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := b.Read(buf)
				if n > 0 {
					if p.mute.Load() {
						p.dropped.Add(int64(n))
					} else if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// cut closes the listener and every connection: the client sees its
// connection drop, and cannot come back through here.
func (p *cutProxy) cut() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// TestASendWhoseAckIsLostSaysSoAtOnceAndARetryIsStoredOnce: the broker
// stores a post, its ack is lost, and the connection drops. The send
// returns as the connection drops (it waited out its 10 s deadline) and
// says the post was not confirmed and may be stored, naming its id (it
// said it could not post); a retry with that id is stored once.
func TestASendWhoseAckIsLostSaysSoAtOnceAndARetryIsStoredOnce(t *testing.T) {
	h := newHarness(t, true)
	p := newCutProxy(t, h.b.URL())
	ctx := ctxT(t)
	e, err := mesh.Connect(ctx, mesh.Options{URL: p.url(), Space: space, Name: "alice", OneShot: true, Subscribe: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })

	p.mute.Store(true)
	type result struct {
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		_, err := e.Send(context.Background(), "team", "hello", mesh.WithID("retry-1"))
		done <- result{err, time.Now()}
	}()
	// The ack (and only the broker's answers) is swallowed; the post is
	// stored: the stream says so.
	testutil.WaitFor(t, 5*time.Second, func() error {
		if n := chatCount(t, h.js); n != 1 {
			return errors.New("the post is not stored yet")
		}
		if p.dropped.Load() == 0 {
			return errors.New("no ack swallowed yet")
		}
		return nil
	})
	cutAt := time.Now()
	p.cut()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the send did not return within its own 10 s deadline after the connection dropped")
	}
	var nc *mesh.NotConfirmedError
	if !errors.As(r.err, &nc) || nc.ID != "retry-1" ||
		!strings.Contains(r.err.Error(), "not confirmed: the mesh stopped before acknowledging; it may be stored, id retry-1") {
		t.Fatalf("the send said %v, want it not confirmed, with its id", r.err)
	}
	// Returning at the drop, not at the deadline: well under half of it.
	if took := r.at.Sub(cutAt); took > 5*time.Second {
		t.Errorf("the send returned %s after the connection dropped", took)
	}

	again, err := mesh.Connect(ctx, mesh.Options{URL: h.b.URL(), Space: space, Name: "alice", OneShot: true, Subscribe: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Close() })
	rc, err := again.Send(ctx, "team", "hello", mesh.WithID("retry-1"))
	if err != nil || !rc.Duplicate {
		t.Fatalf("the retry: %+v, %v; want it taken as the stored duplicate", rc, err)
	}
	if n := chatCount(t, h.js); n != 1 {
		t.Fatalf("%d posts stored, want the one", n)
	}
}

// chatCount is how many posts the space's CHAT stream holds.
func chatCount(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	st, err := js.Stream(ctxT(t), wire.ChatStream(space))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}
