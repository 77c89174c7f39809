package host_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
)

// startReachable starts a mesh listening on this machine's reachable
// address (up --host), with no manager of its own.
func startReachable(t *testing.T, p config.Paths) *host.Host {
	t.Helper()
	m, err := host.Start(context.Background(), host.Config{Paths: p, Host: testutil.ReachableIP(), NoManager: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// TestAReachableMeshIsDialledByItsRecordedPin: broker.json records the
// pin and the listen address; a local client that reads it, and one given
// the record's URL, pin it; a pin given wins, and a wrong one is refused
// in the handshake.
func TestAReachableMeshIsDialledByItsRecordedPin(t *testing.T) {
	p := config.Paths{Space: "reach", StoreDir: t.TempDir()}
	m := startReachable(t, p)
	pin := m.Broker().TLSPin()
	rec, err := config.ReadBrokerRecord(p)
	if err != nil || rec.TLSPin != pin || rec.Host != testutil.ReachableIP() || !strings.HasPrefix(rec.URL, "tls://") {
		t.Fatalf("broker.json %+v (%v): want the pin %s, the host and a tls:// URL", rec, err, pin)
	}
	for _, server := range []string{"", rec.URL} {
		tg, err := host.Resolve(p, server, p.OperatorCreds(), config.TLSTrust{})
		if err != nil || tg.Trust.Pin != pin {
			t.Fatalf("resolve with server %q: %+v %v; want the recorded pin", server, tg.Trust, err)
		}
		nc, err := tg.Connect("test")
		if err != nil {
			t.Fatalf("server %q: %v", server, err)
		}
		nc.Close()
	}
	nc, err := host.ConnectIfRunning(p, "test")
	if err != nil || nc == nil {
		t.Fatalf("connect if running: %v", err)
	}
	nc.Close()

	wrong := config.TLSTrust{Pin: strings.Repeat("cd", 32)}
	tg, err := host.Resolve(p, "", p.OperatorCreds(), wrong)
	if err != nil || tg.Trust != wrong {
		t.Fatalf("a pin given: %+v %v; want it, not the record's", tg.Trust, err)
	}
	if _, err := tg.Connect("test"); !errors.Is(err, config.ErrUntrustedServer) || !strings.Contains(err.Error(), pin) {
		t.Fatalf("wrong pin: %v; want untrusted, naming the fingerprint %s", err, pin)
	}
	if _, err := host.Resolve(p, "", "", config.TLSTrust{Pin: "xyz"}); err == nil {
		t.Fatal("a malformed pin was taken")
	}
}

// TestSuperviseReachesAReachableMeshByItsPin: a supervise host dials the
// TLS listener with the pin it is given, and is refused with a wrong one
// before its credential is sent.
func TestSuperviseReachesAReachableMeshByItsPin(t *testing.T) {
	p := config.Paths{Space: "reachsup", StoreDir: t.TempDir()}
	m := startReachable(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sup := func(trust config.TLSTrust) (*host.Host, error) {
		return host.Start(ctx, host.Config{Paths: p, ProjectDir: shellProject(t), Readiness: 10 * time.Second,
			Supervise: &host.Supervise{URL: m.Broker().URL(), Creds: p.OperatorCreds(), Trust: trust, InstanceFile: filepath.Join(t.TempDir(), "sup.id")}})
	}
	if _, err := sup(config.TLSTrust{Pin: strings.Repeat("ef", 32)}); !errors.Is(err, config.ErrUntrustedServer) || !strings.Contains(err.Error(), "not even the credential") {
		t.Fatalf("supervise with a wrong pin: %v; want untrusted, nothing sent", err)
	}
	h, err := sup(config.TLSTrust{Pin: m.Broker().TLSPin()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if h.Manager() == nil {
		t.Fatal("no manager")
	}
}
