package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
)

// startManager serves the manager endpoint from this process on nc, a
// connection to the mesh at url, which seats dial verifying it as trust
// says; the manager's instance id lives in idFile. Hosted or supervising,
// it is the same manager.
func (h *Host) startManager(ctx context.Context, nc *nats.Conn, url string, trust config.TLSTrust, idFile string) error {
	cfg := h.cfg
	mgr, err := seat.New(seat.Options{
		Space: cfg.Paths.Space, URL: url, TLS: trust, Conn: nc,
		Identity:     ep.Identity{Principal: wire.Principal{Owner: "local", Actor: "cotal_manager"}, UID: wire.NewLifecycleUID()},
		InstanceFile: idFile, ProjectDir: cfg.ProjectDir, Declared: declared(cfg.Paths),
		Minter: issue.NewSeatMinter(cfg.Paths, nc, cfg.Open), Open: cfg.Open,
		Readiness: cfg.Readiness, MaxSessions: cfg.MaxSessions, Logf: h.logf,
		Launcher: launcher(), RunDir: issue.RunDir(cfg.Paths), Protect: SeatProtect(cfg.Paths), SandboxSkip: cfg.SandboxSkip,
		FloorQuiet: cfg.FloorQuiet, HookGrace: cfg.HookGrace, Resume: h.resume,
	})
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := mgr.Start(sctx); err != nil {
		_ = mgr.Close()
		return fmt.Errorf("starting the manager: %w", err)
	}
	h.mu.Lock()
	h.manager = mgr
	h.mu.Unlock()
	h.resumed()
	h.reportCustody()
	return nil
}

// launcher is this executable, which is also the seat launcher (main and
// every test binary that spawns seats call sandbox.Main first); "" when it
// cannot be found, and seats then start unsandboxed, saying so.
func launcher() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// SeatProtect are the store's directories no seat may see into: the keys,
// the operator's and minted creds and identity records (auth), and the
// stored messages of everyone (JetStream). The manager adds the seats'
// launch directories.
func SeatProtect(p config.Paths) []string { return []string{p.AuthDir(), p.JetStreamDir()} }

// ManagerFile is where the mesh-hosted manager keeps its instance id.
func ManagerFile(p config.Paths) string { return filepath.Join(p.StoreDir, "manager.id") }
