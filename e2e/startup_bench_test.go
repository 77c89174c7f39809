package e2e

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testmesh"
)

// fixtureMessages is how many CHAT messages the chat100k store holds.
const fixtureMessages = 100_000

// fixtureChannels spreads the fixture over enough channels that no
// (sender, channel) subject passes CHAT's cap of 1000 messages: 100 000
// messages over 100 channels is exactly 1000 each.
const fixtureChannels = 100

// BenchmarkStartup measures how long `cotal up --detach` takes to return a
// ready mesh, next to a bare embedded nats-server opening the same kind of
// store with the same trust, measured in the same run as the baseline.
// Each iteration costs a process start and, for chat100k, two copies of a
// 100 000 message store, so run it with a small fixed count:
//
//	go test -run XXX -bench Startup -benchtime 5x ./e2e
func BenchmarkStartup(b *testing.B) {
	if testing.Short() {
		b.Skip("startup benchmark starts real meshes; skipped under -short")
	}
	b.Run("empty", func(b *testing.B) {
		// An empty store for the bare server: only the space's keys, so it
		// trusts what a cotal store trusts.
		fixture := b.TempDir()
		if _, err := broker.LoadAuthority(config.Paths{Space: "default", StoreDir: fixture}); err != nil {
			b.Fatal(err)
		}
		b.Run("cotal-up-detach", func(b *testing.B) {
			benchCotalUp(b, "", "default")
		})
		b.Run("bare-nats", func(b *testing.B) {
			benchBareNATS(b, fixture, "default")
		})
	})
	b.Run("chat100k", func(b *testing.B) {
		fixture := buildChatFixture(b)
		b.Run("cotal-up-detach", func(b *testing.B) {
			benchCotalUp(b, fixture, "bench")
		})
		b.Run("bare-nats", func(b *testing.B) {
			benchBareNATS(b, fixture, "bench")
		})
	})
}

// benchCotalUp times `cotal up --detach` until it returns 0, each time with
// a fresh COTAL_HOME and, when fixture is set, on a fresh copy of it.
func benchCotalUp(b *testing.B, fixture, space string) {
	var ready time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		root := b.TempDir()
		home := filepath.Join(root, "home")
		args := []string{"up", "--detach", "--space", space}
		if fixture != "" {
			store := filepath.Join(root, "store")
			if err := copyTree(fixture, store); err != nil {
				b.Fatal(err)
			}
			args = append(args, "--store-dir", store)
		}
		b.StartTimer()
		start := time.Now()
		stdout, stderr, code := runCotal(b, home, args...)
		took := time.Since(start)
		b.StopTimer()
		ready += took
		if code != 0 {
			b.Fatalf("cotal %v: exit %d\nstdout: %s\nstderr: %s", args, code, stdout, stderr)
		}
		down := append([]string{"down"}, args[2:]...)
		if stdout, stderr, code := runCotal(b, home, down...); code != 0 {
			b.Fatalf("cotal %v: exit %d\nstdout: %s\nstderr: %s", down, code, stdout, stderr)
		}
		os.RemoveAll(root)
		b.StartTimer()
	}
	b.ReportMetric(float64(ready.Microseconds())/1000/float64(b.N), "ms/ready")
}

// benchBareNATS times a bare embedded nats-server from NewServer until it
// accepts connections with JetStream on, on a fresh copy of fixture, trusting
// the copy's authority as cotal would.
func benchBareNATS(b *testing.B, fixture, space string) {
	var ready time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		store := filepath.Join(b.TempDir(), "store")
		if err := copyTree(fixture, store); err != nil {
			b.Fatal(err)
		}
		paths := config.Paths{Space: space, StoreDir: store}
		auth, err := broker.LoadAuthority(paths)
		if err != nil {
			b.Fatal(err)
		}
		opts := &server.Options{
			Host:      "127.0.0.1",
			Port:      -1,
			NoSigs:    true,
			NoLog:     true,
			JetStream: true,
			StoreDir:  paths.JetStreamDir(),
		}
		opts.TrustedOperators, opts.AccountResolver, opts.SystemAccount = auth.Trust()
		b.StartTimer()
		start := time.Now()
		srv, err := server.NewServer(opts)
		if err != nil {
			b.Fatal(err)
		}
		srv.Start()
		ok := srv.ReadyForConnections(30*time.Second) && srv.JetStreamEnabled()
		took := time.Since(start)
		b.StopTimer()
		ready += took
		srv.Shutdown()
		srv.WaitForShutdown()
		if !ok {
			b.Fatalf("bare nats-server on %s not ready with JetStream within 30s", store)
		}
		os.RemoveAll(store)
		b.StartTimer()
	}
	b.ReportMetric(float64(ready.Microseconds())/1000/float64(b.N), "ms/ready")
}

// buildChatFixture makes, once per benchmark run, a stopped store of space
// "bench" whose CHAT stream holds fixtureMessages messages. It is written
// with interval sync only to be quick; the store format is the same.
func buildChatFixture(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m, err := host.Start(ctx, host.Config{Paths: config.Paths{Space: "bench", StoreDir: dir}, Sync: config.SyncInterval})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	nc, err := m.Broker().Connect("fixture")
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	// The CHAT stream acknowledges nothing: publish in batches and wait
	// for every batch's stored notices.
	const batch = 1000
	msgs := make([]*nats.Msg, 0, batch)
	for i := 0; i < fixtureMessages; i++ {
		m := nats.NewMsg(fmt.Sprintf("cotal.bench.chat.local.alice.team.c%d", i%fixtureChannels))
		m.Data = fmt.Appendf(nil, `{"n":%d,"text":"fixture message %d"}`, i, i)
		m.Header.Set(nats.MsgIdHdr, fmt.Sprintf("fixture-%d", i))
		msgs = append(msgs, m)
		if len(msgs) == batch || i == fixtureMessages-1 {
			if _, err := testmesh.Publish(nc, time.Minute, msgs...); err != nil {
				b.Fatalf("fixture messages: %v", err)
			}
			msgs = msgs[:0]
		}
	}
	s, err := js.Stream(ctx, "CHAT_bench")
	if err != nil {
		b.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if info.State.Msgs != fixtureMessages {
		b.Fatalf("CHAT_bench holds %d messages, want %d", info.State.Msgs, fixtureMessages)
	}
	nc.Close()
	if err := m.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// copyTree copies src to dst as `cp -a` would: directories, regular files
// and symlinks, keeping modes, ownership and modification times.
func copyTree(src, dst string) error {
	type dirTimes struct {
		path string
		mod  time.Time
	}
	var dirs []dirTimes
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			if err := os.Mkdir(to, 0o700); err != nil {
				return err
			}
			dirs = append(dirs, dirTimes{to, info.ModTime()})
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if err := copyFile(path, to); err != nil {
				return err
			}
		default:
			return fmt.Errorf("copying %s: not a file, directory or symlink", path)
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			if err := os.Lchown(to, int(st.Uid), int(st.Gid)); err != nil {
				return err
			}
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			if err := os.Chmod(to, info.Mode().Perm()); err != nil {
				return err
			}
			if !info.IsDir() {
				return os.Chtimes(to, info.ModTime(), info.ModTime())
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A directory's time changes as its entries are made, so set them last.
	for _, d := range dirs {
		if err := os.Chtimes(d.path, d.mod, d.mod); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
