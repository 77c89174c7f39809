package launch

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
)

// TestFlagsNoMeshRunsWithAreBadInput: each contradiction of up's and
// down's flags is refused as bad input naming the flag.
func TestFlagsNoMeshRunsWithAreBadInput(t *testing.T) {
	ok := UpOptions{Sync: config.SyncAlways, MaxSessions: 1}
	with := func(f func(*UpOptions)) UpOptions { o := ok; f(&o); return o }
	for _, c := range []struct {
		o    UpOptions
		want string
	}{
		{ok, ""},
		{with(func(o *UpOptions) { o.JSON = true }), "--json prints what up --detach"},
		{with(func(o *UpOptions) { o.Sync = "never" }), `--sync "never"`},
		{with(func(o *UpOptions) { o.Readiness = time.Millisecond }), "--readiness 1ms"},
		{with(func(o *UpOptions) { o.MaxSessions = 0 }), "--max-sessions 0"},
		{with(func(o *UpOptions) { o.URLs = []string{"nats://a:4222"}; o.Sync = config.SyncInterval }), "--sync interval applies to the embedded broker"},
		{with(func(o *UpOptions) { o.File.Apply = true }), "--apply and --prune go with -f FILE"},
		{with(func(o *UpOptions) { o.File.File = "x"; o.Open = true }), "--open with -f"},
		{with(func(o *UpOptions) { o.File.File = "x"; o.Sync = "never" }), ""}, // up -f's sync is the file's start
		{with(func(o *UpOptions) { o.Host = "0.0.0.0"; o.Open = true }), "--open with --host 0.0.0.0 refused"},
		{with(func(o *UpOptions) { o.Host = "192.0.2.7"; o.Open = true }), "reachable from other machines"},
		{with(func(o *UpOptions) { o.Host = "127.0.0.1"; o.Open = true }), ""}, // loopback: this machine only
		{with(func(o *UpOptions) { o.Host = "0.0.0.0"; o.TLSCert = "c.pem" }), "--tls-cert and --tls-key go together"},
		{with(func(o *UpOptions) { o.TLSCert, o.TLSKey = "c.pem", "k.pem" }), "they go with --host"},
		{with(func(o *UpOptions) { o.Host = "0.0.0.0"; o.URLs = []string{"nats://a:4222"} }), "--host is where the embedded broker listens"},
		{with(func(o *UpOptions) { o.Host = "10.0.0.1:4222" }), "--host: \"10.0.0.1:4222\" carries a port"},
		{with(func(o *UpOptions) { o.Host = "0.0.0.0"; o.TLSCert, o.TLSKey = "c.pem", "k.pem" }), ""},
	} {
		err := c.o.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !cliargs.IsUsage(err) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	for _, o := range []DownOptions{{WithAgents: true, KeepSeats: true}, {Preserve: true, File: "x"}, {Preserve: true, WithAgents: true}} {
		if err := o.Check(); !cliargs.IsUsage(err) {
			t.Errorf("down %+v: %v, want bad input", o, err)
		}
	}
}

// TestTheBackgroundUpGetsTheSameFlags: the child up --detach starts runs
// the same space, store and flags, and gets --creds only for a mesh on
// external servers.
func TestTheBackgroundUpGetsTheSameFlags(t *testing.T) {
	p := config.Paths{Space: "s", StoreDir: "/st"}
	o := UpOptions{Sync: config.SyncAlways, MaxSessions: 3, Readiness: time.Minute, Open: true}
	got := o.childArgs(p, "/c.creds")
	want := []string{"up", "--space", "s", "--store-dir", "/st", "--sync", "always", "--max-sessions", "3", "--readiness", "1m0s", "--open"}
	if !slices.Equal(got, want) {
		t.Errorf("embedded: %q, want %q", got, want)
	}
	o.Open, o.URLs = false, []string{"nats://a:4222"}
	got = o.childArgs(p, "/c.creds")
	if !slices.Equal(got[len(got)-4:], []string{"--url", "nats://a:4222", "--creds", "/c.creds"}) {
		t.Errorf("external: %q", got)
	}
	o.URLs, o.Host, o.TLSCert, o.TLSKey, o.TLSCA = nil, "0.0.0.0", "/p/c.pem", "/p/k.pem", "/p/ca.pem"
	got = o.childArgs(p, "/c.creds")
	if !slices.Equal(got[len(got)-8:], []string{"--host", "0.0.0.0", "--tls-cert", "/p/c.pem", "--tls-key", "/p/k.pem", "--tls-ca", "/p/ca.pem"}) {
		t.Errorf("reachable: %q", got)
	}
	o.TLSCert, o.TLSKey, o.TLSCA = "", "", ""
	got = o.childArgs(p, "/c.creds")
	if !slices.Equal(got[len(got)-2:], []string{"--host", "0.0.0.0"}) {
		t.Errorf("reachable, self-signed: %q", got)
	}
}

// The background up of a leaf gets its leaf flags, the credential by
// its absolute path.
func TestTheBackgroundUpGetsTheLeafFlags(t *testing.T) {
	p := config.Paths{Space: "s", StoreDir: "/st"}
	o := UpOptions{Sync: config.SyncAlways, MaxSessions: 3, Leaf: host.LeafFlags{Remote: "nats://hub:7422", Creds: "/l.creds"}}
	got := o.childArgs(p, "")
	if !slices.Equal(got[len(got)-4:], []string{"--leaf", "nats://hub:7422", "--leaf-creds", "/l.creds"}) {
		t.Errorf("leaf: %q", got)
	}
	o.Leaf = host.LeafFlags{Listen: "0.0.0.0:7422", Domain: "home"}
	got = o.childArgs(p, "")
	if !slices.Equal(got[len(got)-4:], []string{"--leaf-listen", "0.0.0.0:7422", "--domain", "home"}) {
		t.Errorf("hub: %q", got)
	}
}
