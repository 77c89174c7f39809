package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/internal/quit"
	"github.com/cotal-go/cotal/seat"
)

// Up is `cotal up`. With -f it applies the manifest (the mesh started in
// the background first when none runs). Else the preserved seats are
// discarded first with --fresh, then the mesh runs in this process until
// a quit signal its rule accepts, or, with --detach, starts in the
// background. A space that already runs is said, not an error.
func Up(ctx context.Context, c Caller, o UpOptions) error {
	if o.Host != "" {
		o.TLSCA = c.TLS.CA
	}
	if err := o.Check(); err != nil {
		return err
	}
	if o.File != (FileOptions{}) {
		c, m, err := c.withManifest(o.File.File)
		if err != nil {
			return err
		}
		return upFile(ctx, c, o, m)
	}
	c, _, err := c.resolved("")
	if err != nil {
		return err
	}
	p := c.paths
	leaf, err := host.ResolveLeaf(p, o.Leaf)
	if err != nil {
		return cliargs.Usagef("%v", err)
	}
	if o.Fresh {
		if err := discardPreserved(c); err != nil {
			return err
		}
	}
	if o.Detach && !detachedChild() {
		return detach(ctx, c, o)
	}
	h, err := host.Start(ctx, host.Config{Data: c.data, Paths: p, Open: o.Open, Sync: o.Sync, Log: c.Err, Verbose: o.Verbose, MaxSessions: o.MaxSessions,
		Readiness: o.Readiness, Servers: o.URLs, Creds: o.externalCreds(c.Creds), ManagerOnly: o.ManagerOnly, Host: o.Host, TLS: o.tlsFiles(), Leaf: leaf})
	var running *host.AlreadyRunningError
	if errors.As(err, &running) {
		fmt.Fprintln(c.Out, running.Error())
		return nil
	}
	if err != nil {
		return err
	}
	ctx, stop := quit.Until(ctx, c.Quit(h))
	defer stop()
	var custody []string
	if m := h.Manager(); m != nil {
		custody = m.CustodyReport().Lines()
	}
	clirender.Up(c.Out, clirender.Started{Space: p.Space, URL: h.Broker().URL(), PID: os.Getpid(), Open: o.Open, Store: p.StoreDir, MaxStore: h.Broker().MaxStore(),
		External: h.External(), ManagerOnly: o.ManagerOnly, Leaf: h.LeafRecord(), Sync: o.Sync, Custody: custody, Foreground: !detachedChild(),
		Remote: remoteOf(o.Host, h.Broker().URL(), h.Broker().TLSPin())})
	err = h.Run(ctx)
	clirender.MeshStopped(c.Out, p.Space)
	return err
}

// detach is `cotal up --detach`: the mesh started as a background process
// of this executable, reported once it is ready (as JSON with o.JSON),
// or the space said to run already.
func detach(ctx context.Context, c Caller, o UpOptions) error {
	p := c.paths
	start := time.Now()
	rec, err := host.Detach(ctx, host.DetachConfig{
		Paths: p, Args: o.childArgs(p, c.Creds), Env: []string{envDetachedChild + "=1"}, Timeout: o.Timeout,
		Slow: func(pid int) { clirender.WaitingReady(c.Err, p.Space, pid) },
	})
	var running *host.AlreadyRunningError
	var late *host.NotReadyError
	switch {
	case errors.As(err, &running) && o.JSON:
		r := remoteOf(running.Host, running.URL, running.TLSPin)
		clirender.JSON(c.Out, clirender.UpJSON{Space: p.Space, AlreadyRunning: true, PID: running.PID, URL: running.URL, Log: p.LogFile(),
			Host: r.Host, RemoteURLs: r.URLs, TLSPin: r.Pin})
		return nil
	case errors.As(err, &running):
		fmt.Fprintln(c.Out, running.Error())
		return nil
	case errors.As(err, &late):
		return fmt.Errorf("%w, stop it with `cotal down --space %s`", err, p.Space)
	case err != nil:
		return err
	}
	if o.JSON {
		r := remoteOf(rec.Host, rec.URL, rec.TLSPin)
		clirender.JSON(c.Out, clirender.UpJSON{Space: p.Space, URL: rec.URL, PID: rec.PID, Mode: rec.Mode, Sync: rec.Sync,
			ReadyMs: time.Since(start).Milliseconds(), Store: p.StoreDir, Log: p.LogFile(), Host: r.Host, RemoteURLs: r.URLs, TLSPin: r.Pin, Leaf: rec.Leaf})
		return nil
	}
	took := time.Since(start)
	custody := rec.Custody
	if !rec.Said {
		custody = custodyLines(c)
	}
	clirender.Detached(c.Out, p.Space, rec.BrokerRecord, remoteOf(rec.Host, rec.URL, rec.TLSPin), took, p.LogFile(), custody)
	if o.ManagerOnly {
		clirender.ManagerOnly(c.Out)
	}
	return nil
}

// custodyLines asks the managers of a mesh started in the background what
// its start made of the seats its keepers held, when it did not say so
// on the ready pipe.
func custodyLines(c Caller) []string {
	cl, nc, err := c.Managers()
	if err != nil {
		return nil
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clirun.Timeout)
	defer cancel()
	cs, err := cl.Census(ctx, "")
	if err != nil {
		return nil
	}
	return seat.CustodyOf(cs.Rows).Lines()
}

// remoteOf is how other machines reach a mesh listening on host at url
// serving the certificate pin; zero when it listens on loopback only.
func remoteOf(host, url, pin string) clirender.Remote {
	if host == "" {
		return clirender.Remote{}
	}
	return clirender.Remote{Host: host, URLs: broker.RemoteURLs(host, url), Pin: pin}
}
