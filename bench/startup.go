package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

// startupPaths are the rows that start a mesh of their own.
func startupPaths() []path {
	return []path{
		{name: "up to ready (empty store)", base: "bare embedded nats-server, JetStream on", goal: "under 40 ms",
			absolute: 40 * time.Millisecond, notOnURL: "starts a mesh of its own on this machine", run: upPath},
	}
}

// upPath is `cotal up --detach` of a new space in a fresh COTAL_HOME until
// it returns ready (provisioning, the delivery service and the manager,
// the hand-off from the background process), its `down` outside the
// measure; the floor is a bare embedded server with JetStream and the
// same trust starting on an empty store. The cotal side runs this
// executable, so it is measured from `cotal bench` only.
func upPath(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
	exe, err := os.Executable()
	if err != nil {
		return Stat{}, Stat{}, err
	}
	run := func(home string, args ...string) error {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, exe, args...)
		cmd.Env = append(os.Environ(), "COTAL_HOME="+home)
		cmd.Dir = e.project
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("cotal %v: %v: %s", args, err, bytes.TrimSpace(out.Bytes()))
		}
		return nil
	}
	fresh := func(i int) (string, error) {
		return os.MkdirTemp(e.dir, fmt.Sprintf("up-%d-", i+1))
	}
	cotal := func(i int) (time.Duration, error) {
		dir, err := fresh(i)
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		home := filepath.Join(dir, "home")
		start := time.Now()
		if err := run(home, "up", "--detach", "--space", "benchup"); err != nil {
			return 0, err
		}
		d := time.Since(start)
		return d, run(home, "down", "--space", "benchup")
	}
	floor := func(i int) (time.Duration, error) {
		dir, err := fresh(i)
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		paths := config.Paths{Space: "benchup", StoreDir: filepath.Join(dir, "store")}
		auth, err := broker.LoadAuthority(paths)
		if err != nil {
			return 0, err
		}
		opts := &server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true, JetStream: true, StoreDir: paths.JetStreamDir()}
		opts.TrustedOperators, opts.AccountResolver, opts.SystemAccount = auth.Trust()
		start := time.Now()
		srv, err := server.NewServer(opts)
		if err != nil {
			return 0, err
		}
		srv.Start()
		ok := srv.ReadyForConnections(within) && srv.JetStreamEnabled()
		d := time.Since(start)
		srv.Shutdown()
		srv.WaitForShutdown()
		if !ok {
			return 0, fmt.Errorf("a bare nats-server was not ready with JetStream within %s", within)
		}
		return d, nil
	}
	return pair(ctx, budget, 3, 200, cotal, floor)
}
