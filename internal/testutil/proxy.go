package testutil

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Link is a loopback TCP relay to one address that a test can cut (every
// connection through it closed, new ones refused) and restore, to stand
// for a network link that drops and returns while both ends keep running.
type Link struct {
	target string
	ln     net.Listener

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

// NewLink relays connections on a free loopback port to target until the
// test ends.
func NewLink(t testing.TB, target string) *Link {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Link{target: target, ln: ln}
	go l.serve()
	t.Cleanup(func() {
		ln.Close()
		l.Cut()
	})
	return l
}

// Addr is the relay's host:port.
func (l *Link) Addr() string { return l.ln.Addr().String() }

// Cut closes every relayed connection and refuses new ones until Restore.
func (l *Link) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// Restore lets connections through again.
func (l *Link) Restore() {
	l.mu.Lock()
	l.cut = false
	l.mu.Unlock()
}

func (l *Link) serve() {
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		if l.cut {
			l.mu.Unlock()
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", l.target)
		if err != nil {
			l.mu.Unlock()
			in.Close()
			continue
		}
		l.conns = append(l.conns, in, out)
		l.mu.Unlock()
		go pipe(in, out)
		go pipe(out, in)
	}
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}
