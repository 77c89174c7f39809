package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
)

// noMesh is a server whose link never dials: these tests only watch the
// handshake.
func noMesh() *Server {
	return New(Options{Dial: func(context.Context) (*mesh.Endpoint, error) { return nil, errors.New("no mesh here") }})
}

func clientSeen(s *Server) string {
	s.link.mu.Lock()
	defer s.link.mu.Unlock()
	return s.link.client
}

func waitClient(t *testing.T, s *Server, want string) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, func() error {
		if got := clientSeen(s); got != want {
			return fmt.Errorf("the server saw client %q, want %q", got, want)
		}
		return nil
	})
}

// A client of the 2026-07-28 protocol never sends initialized: its
// server/discover is what makes a harness seat ready.
func TestAModernClientIsInAfterDiscover(t *testing.T) {
	s := noMesh()
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ss, err := s.sdk.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "modern", Version: "2"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitClient(t, s, "modern 2")
}

// A client of the legacy handshake (what the harnesses speak today) is in
// once it sent initialized, not at initialize.
func TestALegacyClientIsInAfterInitialized(t *testing.T) {
	s := noMesh()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ss, err := s.sdk.Connect(ctx, &sdk.IOTransport{Reader: inR, Writer: outW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	replies := bufio.NewScanner(outR)
	send := func(line string) {
		t.Helper()
		if _, err := fmt.Fprintln(inW, line); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"legacy","version":"9"}}}`)
	if !replies.Scan() {
		t.Fatalf("no answer to initialize: %v", replies.Err())
	}
	if got := clientSeen(s); got != "" {
		t.Fatalf("the client counted as in before it sent initialized: %q", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	waitClient(t, s, "legacy 9")
}
