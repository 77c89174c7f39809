package tui

import (
	"context"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh"
)

// The operator is one principal for every CLI command and dashboard: a
// dashboard that dropped its principal's posts as echoes never showed a
// post made from the CLI or from another dashboard.
func TestTheOperatorsPostsFromElsewhereReachTheDashboard(t *testing.T) {
	m := startMesh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	open := func(echoes bool) *mesh.Endpoint {
		e, err := mesh.Connect(ctx, mesh.Options{URL: m.b.URL(), Space: testSpace, Name: "operator", OneShot: true, Echoes: echoes})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		if _, err := e.Join(ctx, ">"); err != nil {
			t.Fatal(err)
		}
		return e
	}
	dash, plain := open(true), open(false)
	cli, alice := m.endpoint(t, "operator"), m.endpoint(t, "alice")
	if _, err := cli.Send(ctx, "general", "from the cli"); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Send(ctx, "general", "from alice"); err != nil {
		t.Fatal(err)
	}
	next := func(e *mesh.Endpoint) Post {
		t.Helper()
		it, err := e.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return postOf(it.Kind, it.Subject, it.Msg, it.Historical)
	}
	if p := next(dash); p.From != "operator" || p.Text != "from the cli" {
		t.Errorf("the dashboard's first post is %s: %q, want the operator's post from the cli", p.From, p.Text)
	}
	if p := next(dash); p.From != "alice" {
		t.Errorf("the dashboard's second post is from %s, want alice", p.From)
	}
	// Without Echoes the same principal's post is dropped: alice's comes first.
	if p := next(plain); p.From != "alice" {
		t.Errorf("an endpoint without Echoes got %s: %q first, want alice's post", p.From, p.Text)
	}
}
