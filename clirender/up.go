package clirender

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/render"
)

// UpJSON is `cotal up --detach --json`.
type UpJSON struct {
	Space          string `json:"space"`
	AlreadyRunning bool   `json:"alreadyRunning,omitempty"`
	URL            string `json:"url,omitempty"`
	PID            int    `json:"pid,omitempty"`
	Mode           string `json:"mode,omitempty"`
	Sync           string `json:"sync,omitempty"`
	ReadyMs        int64  `json:"readyMs,omitempty"` // how long the start took
	Store          string `json:"store,omitempty"`
	Log            string `json:"log"`
	// Leaf is the leaf link the mesh runs with, when it has one.
	Leaf *config.LeafRecord `json:"leaf,omitempty"`
	// Host, RemoteURLs and TLSPin are a mesh reachable from other
	// machines (up --host): where it listens, what they dial, and the
	// certificate fingerprint they pin (--tls-pin).
	Host       string   `json:"host,omitempty"`
	RemoteURLs []string `json:"remoteUrls,omitempty"`
	TLSPin     string   `json:"tlsPin,omitempty"`
}

// Remote is how other machines reach a mesh started with --host: the
// address it listens on, the URLs they dial, the certificate's pin.
type Remote struct {
	Host string
	URLs []string
	Pin  string
}

// remote says how another machine reaches the mesh, with the command it
// runs there.
func remote(w io.Writer, r Remote) {
	if r.Host == "" {
		return
	}
	urls := r.URLs
	if len(urls) == 0 { // loopback named as --host: this machine only, still TLS
		fmt.Fprintf(w, "listening on %s (loopback), TLS only; tls pin %s\n", r.Host, r.Pin)
		return
	}
	fmt.Fprintf(w, "reachable from other machines at %s (TLS only, credentials required)\n", strings.Join(urls, " or "))
	fmt.Fprintf(w, "tls pin %s\n", r.Pin)
	fmt.Fprintf(w, "on another machine: cotal --server %s --creds FILE --tls-pin %s send ... (FILE from `cotal mint <name>` here)\n", urls[0], r.Pin)
}

// Started is a mesh up in this process, as `cotal up` says it.
type Started struct {
	Space, URL string
	PID        int
	Open       bool
	Store      string
	MaxStore   int64
	External   string // which external cluster it lives on; "" for the embedded broker
	// ManagerOnly: it joined a mesh another host provisioned there.
	ManagerOnly bool
	Leaf        *config.LeafRecord // the leaf link it runs with; nil for none
	Sync        string
	Custody     []string // what the start made of the seats its keepers held
	Foreground  bool     // a person's terminal, not the child of up --detach
	Remote      Remote   // how other machines reach it (up --host)
}

// openExternal is said of an open mesh on servers other machines reach.
const openExternal = "OPEN on an external cluster: anyone who can reach those servers can read and post as anyone, on every machine"

// Up says a mesh is up in this process: where, in which mode, its store,
// the cluster it lives on, the warning its sync mode calls for, what
// custody made of its seats, how to stop it.
func Up(w io.Writer, s Started) {
	mode := "auth mode: per-agent credentials"
	if s.Open {
		mode = "OPEN mode: no authentication, owner local; anyone on this machine can read and post as anyone"
	}
	fmt.Fprintf(w, "mesh %s up on %s (pid %d, %s)\n", s.Space, s.URL, s.PID, mode)
	fmt.Fprintf(w, "store %s (limit %s)\n", s.Store, render.Bytes(s.MaxStore))
	remote(w, s.Remote)
	if s.External != "" {
		fmt.Fprintln(w, s.External)
		if s.Open {
			fmt.Fprintln(w, openExternal)
		}
	}
	if s.ManagerOnly {
		ManagerOnly(w)
	}
	if s.Leaf != nil {
		LeafLine(w, *s.Leaf)
	}
	if s.Sync == config.SyncInterval {
		fmt.Fprintln(w, "WARNING: --sync interval: the store is fsynced every 2 minutes, so an OS crash or power loss can lose messages the mesh already acknowledged")
	}
	Lines(w, s.Custody)
	if s.Foreground {
		fmt.Fprintln(w, "press Ctrl-C to stop")
	}
}

// ManagerOnly says what a host that joined with --manager-only does and
// does not do.
func ManagerOnly(w io.Writer) {
	fmt.Fprintln(w, "manager only: this host serves its manager and seats and provisions nothing; its delivery service stands by and serves only if the lease holder's goes")
}

// MeshStopped says a mesh run in this process stopped.
func MeshStopped(w io.Writer, space string) { fmt.Fprintf(w, "mesh %s stopped\n", space) }

// Waiting says a command waits on the mesh's process to do what ("stop",
// "preserve its seats and stop").
func Waiting(w io.Writer, space string, pid int, what string) {
	fmt.Fprintf(w, "waiting for mesh %s (pid %d) to %s...\n", space, pid, what)
}

// WaitingReady says up waits on the background mesh it started.
func WaitingReady(w io.Writer, space string, pid int) {
	fmt.Fprintf(w, "waiting for mesh %s to be ready (pid %d)...\n", space, pid)
}

// Lines prints each line.
func Lines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// Detached says a mesh started in the background is ready (took is how
// long that took): its mode, the cluster it lives on, the warning its
// sync mode calls for, the lines custody says of its seats, where its log
// is; r is how other machines reach it.
func Detached(w io.Writer, space string, rec config.BrokerRecord, r Remote, took time.Duration, logFile string, custody []string) {
	fmt.Fprintf(w, "mesh %s up on %s (pid %d, %s mode, sync %s) in %s\n", space, rec.URL, rec.PID, rec.Mode, rec.Sync, took.Round(time.Millisecond))
	if rec.Mode == config.ModeOpen {
		fmt.Fprintln(w, "OPEN mode: no authentication; anyone on this machine can read and post as anyone")
	}
	remote(w, r)
	if rec.External {
		fmt.Fprintf(w, "on external NATS servers %s (`cotal status` shows the cluster and each stream's replicas)\n", rec.URL)
		if rec.Mode == config.ModeOpen {
			fmt.Fprintln(w, openExternal)
		}
	}
	if rec.Sync == config.SyncInterval {
		fmt.Fprintln(w, "WARNING: --sync interval: an OS crash or power loss can lose messages the mesh already acknowledged")
	}
	if rec.Leaf != nil {
		LeafLine(w, *rec.Leaf)
	}
	Lines(w, custody)
	fmt.Fprintf(w, "log %s; stop it with `cotal down --space %s`\n", logFile, space)
}

// LeftDashboard says the dashboard a client showed is gone and the mesh
// it showed runs on.
func LeftDashboard(w io.Writer, space string, pid int) {
	fmt.Fprintf(w, "left the dashboard; mesh %s is still running (pid %d); `cotal down --space %s` stops it\n", space, pid, space)
}

// UseJSON is `cotal use --json`: the default set with `cotal use` ("" for
// none) and the space commands run here use, with why.
type UseJSON struct {
	Default string `json:"default"`
	Space   string `json:"space"`
	Source  string `json:"source"`
	Set     string `json:"-"` // the space this use made the default
}

// Use says what `cotal use` set, or what it found.
func Use(w io.Writer, u UseJSON) {
	switch {
	case u.Set != "":
		fmt.Fprintf(w, "default space is now %s\n", u.Set)
	case u.Default == "":
		fmt.Fprintf(w, "no default set; commands here use space %s (%s)\n", u.Space, u.Source)
	default:
		fmt.Fprintf(w, "default space: %s\n", u.Default)
	}
}
