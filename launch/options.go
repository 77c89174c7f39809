package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/seat"
)

// UpOptions are the flags of `cotal up` (and of bare `cotal`, which is up
// without a terminal).
type UpOptions struct {
	Detach      bool
	Open        bool
	Sync        string
	Verbose     bool
	Timeout     time.Duration // with Detach: how long the child has to be ready
	MaxSessions int
	Readiness   time.Duration // a spawned seat's readiness bound; 0: its harness's
	JSON        bool
	Fresh       bool        // discard a preserved inventory instead of resuming it
	File        FileOptions // -f: the mesh a manifest describes
	URLs        []string    // --url: an existing NATS server or cluster
	ManagerOnly bool        // --manager-only: join a mesh another host provisioned there
	// Host (--host) is the address the broker listens on beyond
	// loopback, TLS only: TLSCert and TLSKey (--tls-cert, --tls-key) its
	// pair, none for a self-signed one generated into the store; TLSCA
	// (the root --tls-ca) the CA that signed it.
	Host, TLSCert, TLSKey, TLSCA string
	// Leaf is the leaf link (--leaf, --leaf-creds, --leaf-listen,
	// --domain).
	Leaf host.LeafFlags
}

// FileOptions are up's manifest flags.
type FileOptions struct {
	File         string
	Apply, Prune bool
}

// envDetachedChild marks the background process `up --detach` starts.
const envDetachedChild = "COTAL_DETACHED_CHILD"

// detachedChild reports whether this process is the background mesh an
// `up --detach` started.
func detachedChild() bool { return os.Getenv(envDetachedChild) != "" }

// ReadinessHelp is the --readiness of a command that runs a manager.
var ReadinessHelp = fmt.Sprintf("how long a spawned seat has to come up before its spawn reads uncertain, unless the spawn or its persona says (default 30s; %s for opencode)", seat.OpencodeReadiness)

// CheckReadiness refuses a readiness bound out of the agent file's range;
// 0 is "not said": a default follows.
func CheckReadiness(d time.Duration) error {
	if d == 0 || (d >= config.MinReadiness && d <= config.MaxReadiness) {
		return nil
	}
	return cliargs.Usagef("--readiness %s: give a duration from %s to %s, like 90s or 3m", d, config.MinReadiness, config.MaxReadiness)
}

// CheckMaxSessions refuses a manager with no room for an attach session.
func CheckMaxSessions(n int) error {
	if n < 1 {
		return cliargs.Usagef("--max-sessions %d: the manager needs room for at least 1 attach session", n)
	}
	return nil
}

// CheckManager refuses the flags of a manager (up, supervise) no manager
// can run with.
func CheckManager(maxSessions int, readiness time.Duration) error {
	return errors.Join(CheckMaxSessions(maxSessions), CheckReadiness(readiness))
}

// Check refuses flag values no mesh can run with, or, with -f, that up
// -f does not take.
func (o *UpOptions) Check() error {
	if o.File != (FileOptions{}) {
		if o.Leaf.On() {
			return cliargs.Usagef("--leaf, --leaf-listen, --leaf-creds and --domain start a mesh with a leaf link; with -f, start it first (`cotal up --detach --leaf ...`), then apply the file")
		}
		return o.checkFile()
	}
	if o.JSON && !o.Detach {
		return cliargs.Usagef("--json prints what up --detach started; a mesh in the foreground runs until it is stopped")
	}
	if o.Sync != config.SyncAlways && o.Sync != config.SyncInterval {
		return cliargs.Usagef("--sync %q: use always or interval", o.Sync)
	}
	if err := CheckReadiness(o.Readiness); err != nil {
		return err
	}
	if err := o.checkExternal(); err != nil {
		return err
	}
	if err := o.checkHost(); err != nil {
		return err
	}
	if err := o.checkLeaf(); err != nil {
		return err
	}
	if o.ManagerOnly && len(o.URLs) == 0 {
		return cliargs.Usagef("--manager-only joins a mesh on a NATS cluster another host started it on: name its servers with --url")
	}
	return CheckMaxSessions(o.MaxSessions)
}

// checkExternal refuses --url values no mesh can run on, and --sync
// interval with them: an external cluster's servers decide how they sync.
func (o *UpOptions) checkExternal() error {
	if len(o.URLs) == 0 {
		return nil
	}
	if err := broker.CheckURLs(o.URLs); err != nil {
		return cliargs.Usagef("--url: %v", err)
	}
	if o.Sync != config.SyncAlways {
		return cliargs.Usagef("--sync %s applies to the embedded broker; with --url the cluster's servers decide how they sync (sync_interval in their jetstream block)", o.Sync)
	}
	return nil
}

// checkHost refuses a --host no broker can listen on, an open mesh
// beyond loopback, --host with --url (there is no broker of cotal's to
// bind), and half a TLS pair or a pair without --host.
func (o *UpOptions) checkHost() error {
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return cliargs.Usagef("--tls-cert and --tls-key go together: give the certificate and its key, or neither for a self-signed pair generated into the store")
	}
	if o.Host == "" {
		if o.TLSCert != "" {
			return cliargs.Usagef("--tls-cert and --tls-key are the pair a mesh reachable from other machines serves: they go with --host ADDR")
		}
		return nil
	}
	if err := broker.CheckHost(o.Host); err != nil {
		return cliargs.Usagef("--host: %v", err)
	}
	if len(o.URLs) > 0 {
		return cliargs.Usagef("--host is where the embedded broker listens; with --url the mesh lives on servers you run, which listen where their configuration says")
	}
	if o.Open && !broker.Loopback(o.Host) {
		return cliargs.Usagef("--open with --host %s refused: that address is reachable from other machines, and anyone there could read and post as anyone; drop --open (every client then needs a credential and TLS)", o.Host)
	}
	return nil
}

// tlsFiles are the --tls-* files as the broker takes them, absolute, so
// the child of --detach finds them wherever it runs.
func (o *UpOptions) tlsFiles() broker.TLSFiles {
	return broker.TLSFiles{Cert: absPath(o.TLSCert), Key: absPath(o.TLSKey), CA: absPath(o.TLSCA)}
}

// absPath is p made absolute; "" stays "".
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// externalCreds is the credential `up --url` connects with: --creds when
// the mesh lives on servers cotal did not start, else none.
func (o *UpOptions) externalCreds(creds string) string {
	if len(o.URLs) == 0 {
		return ""
	}
	return creds
}

// childArgs are the arguments of the background `up` that Detach starts:
// the foreground up with the same space, store and flags.
func (o *UpOptions) childArgs(p config.Paths, creds string) []string {
	args := []string{"up", "--space", p.Space, "--store-dir", p.StoreDir, "--sync", o.Sync, "--max-sessions", strconv.Itoa(o.MaxSessions), "--readiness", o.Readiness.String()}
	if o.Open {
		args = append(args, "--open")
	}
	if o.Verbose {
		args = append(args, "--verbose")
	}
	for _, u := range o.URLs {
		args = append(args, "--url", u)
	}
	if c := o.externalCreds(creds); c != "" {
		args = append(args, "--creds", c)
	}
	if o.ManagerOnly {
		args = append(args, "--manager-only")
	}
	if o.Host != "" {
		args = append(args, "--host", o.Host)
		f := o.tlsFiles()
		for _, kv := range [][2]string{{"--tls-cert", f.Cert}, {"--tls-key", f.Key}, {"--tls-ca", f.CA}} {
			if kv[1] != "" {
				args = append(args, kv[0], kv[1])
			}
		}
	}
	return append(args, o.leafArgs()...)
}

// checkLeaf refuses leaf flags no link can run with.
func (o *UpOptions) checkLeaf() error {
	l := o.Leaf
	switch {
	case !l.On():
		return nil
	case l.Listen != "" && l.Remote != "":
		return cliargs.Usagef("--leaf and --leaf-listen: a mesh is a hub leaves dial (--leaf-listen) or a leaf of one hub (--leaf), not both")
	case l.Listen == "" && l.Remote == "":
		return cliargs.Usagef("--leaf-creds and --domain name a leaf link: add --leaf nats://HUB:7422 (a leaf) or --leaf-listen ADDR (a hub)")
	case l.Listen != "" && l.Creds != "":
		return cliargs.Usagef("--leaf-creds is the credential a leaf dials its hub with; a hub mints them (`cotal leaf-creds NAME`)")
	case l.Remote != "" && l.Creds == "":
		return cliargs.Usagef("--leaf needs the link credential the hub minted for this machine: run `cotal leaf-creds NAME` on the hub and pass the file with --leaf-creds")
	case len(o.URLs) > 0:
		return cliargs.Usagef("--leaf and --leaf-listen link the embedded broker; with --url the mesh lives on servers you run, which link themselves")
	case o.Open:
		return cliargs.Usagef("--open with a leaf link: a link is authenticated by a credential the hub mints; drop --open")
	}
	if err := (broker.Leaf{Domain: "x", Listen: l.Listen, Remote: l.Remote}).Check(); err != nil {
		return cliargs.Usagef("%v", err)
	}
	if l.Domain != "" {
		if err := broker.CheckDomain(l.Domain); err != nil {
			return cliargs.Usagef("--domain: %v", err)
		}
	}
	return nil
}

// leafArgs are the leaf flags again, for the detached child (which runs
// in another folder: the credential by its absolute path).
func (o *UpOptions) leafArgs() []string {
	var args []string
	l := o.Leaf
	if l.Listen != "" {
		args = append(args, "--leaf-listen", l.Listen)
	}
	if l.Remote != "" {
		args = append(args, "--leaf", l.Remote)
	}
	if l.Creds != "" {
		creds := l.Creds
		if abs, err := filepath.Abs(creds); err == nil {
			creds = abs
		}
		args = append(args, "--leaf-creds", creds)
	}
	if l.Domain != "" {
		args = append(args, "--domain", l.Domain)
	}
	return args
}
