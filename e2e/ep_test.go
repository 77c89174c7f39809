package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// startTestEndpoint serves a small endpoint, test.echo, from this test process over the mesh's TCP listener with the operator credential, as any out-of-tree endpoint would.
func startTestEndpoint(t *testing.T, home, iid string) (*ep.Server, *nats.Conn) {
	t.Helper()
	stdout := mustCotal(t, home, "status", "--json")
	var st struct {
		Space    string `json:"space"`
		URL      string `json:"url"`
		StoreDir string `json:"storeDir"`
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, stdout)
	}
	nc, err := nats.Connect(st.URL, nats.UserCredentials(filepath.Join(st.StoreDir, "auth", "operator.creds")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	srv, err := ep.NewServer(nc, ep.ServerOptions{Space: st.Space, Endpoint: "test.echo", InstanceID: iid,
		Identity: ep.Identity{Principal: wire.Principal{Owner: "local", Actor: "e2e"}, UID: wire.NewLifecycleUID()}})
	if err != nil {
		t.Fatal(err)
	}
	err = srv.Register(ep.Command{Name: "echo", Capability: "read",
		Input:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string"}}}`),
		Output: json.RawMessage(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`),
		Handler: func(_ context.Context, c *ep.Call) (any, *proto.Error) {
			var a struct{ Text string }
			if e := c.Decode(&a); e != nil {
				return nil, e
			}
			return map[string]string{"text": a.Text}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, nc
}

// TestDescribeInvokeDeregister drives a test endpoint the CLI knows nothing about at compile time: describe, invoke with valid and invalid args, and deregister-instance's refusals and success.
func TestDescribeInvokeDeregister(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	startTestEndpoint(t, home, "e2e-a")
	_, ncB := startTestEndpoint(t, home, "e2e-b")

	out := mustCotal(t, home, "describe", "test.echo", "--on", "e2e-a")
	for _, want := range []string{"test.echo  owner local.e2e · instance e2e-a · epoch 1", "echo", "describe", "digest-verified"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe output lacks %q:\n%s", want, out)
		}
	}
	out = mustCotal(t, home, "invoke", "test.echo", "echo", "--args", `{"text":"hi"}`)
	if !strings.Contains(out, `"text": "hi"`) {
		t.Errorf("invoke output:\n%s", out)
	}
	_, stderr, code := runCotal(t, home, "invoke", "test.echo", "echo", "--args", `{"text":5}`)
	if code != 1 || !strings.Contains(stderr, "✗ bad-request") || !strings.Contains(stderr, "did not run") {
		t.Errorf("invalid args: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runCotal(t, home, "invoke", "test.echo", "echo", "--args", `{"text":`)
	if code != 2 {
		t.Errorf("malformed --args: exit %d\n%s", code, stderr)
	}

	_, stderr, code = runCotal(t, home, "deregister-instance", "--endpoint", "test.echo", "--instance", "e2e-a")
	if code != 1 || !strings.Contains(stderr, "instance-answered") {
		t.Errorf("live instance: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runCotal(t, home, "deregister-instance", "--endpoint", "test.echo", "--instance", "nobody")
	if code != 1 || !strings.Contains(stderr, "not-registered") {
		t.Errorf("unknown instance: exit %d\n%s", code, stderr)
	}
	ncB.Close() // a crash: the registration stays
	out = mustCotal(t, home, "deregister-instance", "--endpoint", "test.echo", "--instance", "e2e-b")
	if !strings.Contains(out, "✓ deregistered test.echo instance e2e-b") {
		t.Errorf("deregister output:\n%s", out)
	}
}
