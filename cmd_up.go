package main

import (
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/launch"
	"github.com/cotal-go/cotal/seat/attach"
)

func newUpCmd(g *globals) *cobra.Command {
	f := &launch.UpOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the space's mesh (foreground until Ctrl-C, or --detach)",
		Long: `Start the mesh of a space: an embedded NATS server with JetStream on
loopback, provisioned with the space's streams and buckets.

By default clients need per-agent credentials (see "cotal mint"); --open runs
without any authentication. Writes are fsynced before they are acknowledged;
--sync interval trades that for speed and can lose acknowledged messages on an
OS crash or power loss.

With --url nats://a,nats://b,... the mesh lives on a NATS server or cluster
you run (JetStream on) and no broker is started: streams get min(3, cluster
size) replicas. With auth, the servers must first trust the space: see
"cotal broker config". On a second machine, --manager-only joins that mesh
with a manager and seats of its own: it provisions nothing, needs the
space's keys copied from the first host, and its delivery service serves
only once the serving one is gone.

With --host ADDR the broker listens there instead of on loopback, so other
machines reach it: every client connection must then be TLS and carry a
credential (--open is refused). The certificate is --tls-cert/--tls-key, or
a self-signed pair generated into the store; up prints the URL to dial and
the certificate's SHA-256 fingerprint, which a client elsewhere pins:
"cotal --server tls://ADDR:PORT --creds FILE --tls-pin SHA256 send ...".

--leaf-listen ADDR makes the mesh a hub ("cotal leaf-creds NAME" mints a
leaf's credential); --leaf URL --leaf-creds FILE links it to one. Posts and
DMs cross both ways, and what was sent while the link was down, once.

If the space is already running, up says so and exits 0. Seats left in
their keepers are taken back; seats "down --preserve-state" preserved are
resumed (--fresh discards them, naming them).

With -f FILE, up applies a manifest (cotal.yaml) instead: it starts the
file's space in the background when none runs, then writes its registry,
mints its endpoints' credentials and spawns its seats; run again, it applies
only what changed ("cotal plan -f FILE" shows what that is first).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return reported(launch.Up(cmd.Context(), g.launcher(), *f))
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.Detach, "detach", false, "run the mesh in the background and return once it is ready")
	fl.BoolVar(&f.Open, "open", false, "run without authentication (anyone on this machine can read and post as anyone)")
	fl.StringVar(&f.Sync, "sync", config.SyncAlways, "store durability: always (fsync before every ack) or interval (faster, can lose acked writes on a crash)")
	fl.BoolVar(&f.Verbose, "verbose", false, "log the broker's notices too")
	fl.DurationVar(&f.Timeout, "timeout", 30*time.Second, "with --detach: how long to wait for the mesh to be ready")
	fl.BoolVar(&f.JSON, "json", false, "with --detach: print the started (or running) mesh as JSON")
	fl.IntVar(&f.MaxSessions, "max-sessions", attach.DefaultMaxSessions, "the most attach sessions the manager serves at once; more are refused, naming this flag")
	fl.DurationVar(&f.Readiness, "readiness", 0, launch.ReadinessHelp)
	fl.StringSliceVar(&f.URLs, "url", nil, "run the mesh on an existing NATS server or cluster with JetStream (`nats://a,nats://b,...`), starting no broker; --creds names the credential it connects with")
	fl.BoolVar(&f.ManagerOnly, "manager-only", false, "with --url: join the mesh another host provisioned there, with this host's manager and seats; provisions nothing, and its delivery service serves only if the serving one goes")
	fl.StringVar(&f.Host, "host", "", "listen on this `address` (an IP, a host name, 0.0.0.0 for every interface) so other machines reach the mesh: TLS only, credentials required, the certificate's fingerprint printed for them to pin")
	fl.StringVar(&f.TLSCert, "tls-cert", "", "with --host: the certificate `file` (PEM) to serve, signed by --tls-ca if given (default: a self-signed one generated into the store and reused)")
	fl.StringVar(&f.TLSKey, "tls-key", "", "with --tls-cert: its private key `file` (PEM)")
	fl.StringVar(&f.Leaf.Remote, "leaf", "", "join a hub's mesh of the same space as a leaf (nats://HUB:7422), with --leaf-creds; each side keeps working alone while the link is down")
	fl.StringVar(&f.Leaf.Creds, "leaf-creds", "", "with --leaf: the link credential `file` the hub minted for this machine (cotal leaf-creds NAME there)")
	fl.StringVar(&f.Leaf.Listen, "leaf-listen", "", "be a hub other machines' meshes link to with --leaf: the leafnode listener's `host:port`")
	fl.StringVar(&f.Leaf.Domain, "domain", "", "with --leaf-listen: this hub's JetStream domain (default hub); a leaf's comes from its link credential")
	fl.BoolVar(&f.Fresh, "fresh", false, "discard the seats down --preserve-state preserved (saying which) instead of resuming them")
	fl.StringVarP(&f.File.File, "file", "f", "", "apply this manifest (a cotal.yaml, or a folder holding one): start the mesh in the background if none runs, then its registry, credentials and seats")
	fl.BoolVar(&f.File.Apply, "apply", false, "with -f: restart the seats whose launch changed without asking")
	fl.BoolVar(&f.File.Prune, "prune", false, "with -f: stop the agents the file no longer names")
	return cmd
}

// launcher is what a launch function needs of this command: who and
// where it acts, its streams, the quit rule of a mesh it hosts.
func (g *globals) launcher() launch.Caller {
	return launch.Caller{Caller: g.caller(), In: g.stdin, Out: g.stdout, Err: g.stderr, Terminal: launch.Terminal(g.stdout),
		Quit: func(h *host.Host) func(os.Signal) bool { return hostQuit(g, h) }}
}

// reported turns a failure a launch function already said into exit 1.
func reported(err error) error {
	if errors.Is(err, launch.ErrReported) {
		return exitError{exitFail}
	}
	return err
}
