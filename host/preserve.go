package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
)

// preserveFile is where `down --preserve-state` names the mesh process that
// is to preserve its seats as it stops.
func preserveFile(p config.Paths) string { return filepath.Join(PreserveDir(p), "preserve-state") }

// PreserveDir is where the space keeps its resume inventory (and the stop
// requests): the part of its run directory no seat sees.
func PreserveDir(p config.Paths) string { return seat.ControlDir(issue.RunDir(p)) }

// Preserved is what StopPreserving left: the inventory, ready.
type Preserved struct {
	PID       int
	Inventory *seat.Inventory
	Mark      seat.ReadyMark
}

// proofWait bounds how long StopPreserving waits for the seats' processes
// to be gone once the mesh is.
const proofWait = 15 * time.Second

// StopPreserving stops the space's mesh for the night: the mesh fences its
// manager, stops its seats without ending their lifecycles and writes the
// resume inventory with the cut; once the mesh is gone this proves every
// seat process and keeper gone and the broker unreachable (for a mesh on
// external servers, which stay up: its process gone from the store), and
// only then writes the ready mark. Killed at any point, it leaves a ready inventory
// or none (an inventory without its mark is discarded by the next up).
func StopPreserving(ctx context.Context, p config.Paths, slow func(pid int)) (Preserved, error) {
	s, err := Probe(p)
	if err != nil {
		return Preserved{}, err
	}
	if !s.Running {
		return Preserved{}, ErrNotRunning
	}
	dir := PreserveDir(p)
	if err := config.EnsureDir(issue.RunDir(p), 0o700); err != nil {
		return Preserved{}, err
	}
	if err := config.EnsureDir(dir, 0o700); err != nil {
		return Preserved{}, err
	}
	// What is there is from a stop that never finished (an up consumes a
	// ready one): it must not pass for this one's.
	if err := seat.RemoveInventory(dir); err != nil {
		return Preserved{}, err
	}
	if err := config.WriteFileAtomic(preserveFile(p), []byte(strconv.Itoa(s.PID)+"\n"), 0o600); err != nil {
		return Preserved{}, fmt.Errorf("asking the mesh to preserve its seats: %w", err)
	}
	_ = os.Remove(keepFile(p))
	pid, err := stop(ctx, p, slow)
	_ = os.Remove(preserveFile(p))
	if err != nil {
		return Preserved{PID: pid}, err
	}
	inv, _, err := seat.ReadInventory(dir)
	switch {
	case err != nil:
		return Preserved{PID: pid}, fmt.Errorf("the mesh's inventory: %w; nothing is preserved", err)
	case inv == nil:
		return Preserved{PID: pid}, fmt.Errorf("mesh %s stopped without writing its inventory (see %s); nothing is preserved, and the next up starts without its seats", p.Space, p.LogFile())
	}
	n, err := proveGone(ctx, inv)
	if err != nil {
		return Preserved{PID: pid, Inventory: inv}, fmt.Errorf("%w; the inventory is not marked ready, so the next up starts without its seats", err)
	}
	// A mesh on NATS servers cotal did not start leaves them running:
	// there the proof is that its process let go of the store.
	addr := "external servers, left running: " + inv.URL
	if !s.Record.External {
		if addr, err = proveUnreachable(inv.URL); err != nil {
			return Preserved{PID: pid, Inventory: inv}, fmt.Errorf("%w; the inventory is not marked ready", err)
		}
	}
	if st, err := Probe(p); err != nil || st.Running {
		return Preserved{PID: pid, Inventory: inv}, fmt.Errorf("a mesh of %s runs again (another up?); the inventory is not marked ready", p.Space)
	}
	mark := seat.ReadyMark{Proved: time.Now().UTC(), Processes: n, Broker: addr}
	if err := seat.MarkReady(dir, mark); err != nil {
		return Preserved{PID: pid, Inventory: inv}, fmt.Errorf("marking the inventory ready: %w", err)
	}
	return Preserved{PID: pid, Inventory: inv, Mark: mark}, nil
}

// proveGone waits until every seat process and keeper of the inventory is
// gone, by the identity recorded for it, and counts them.
func proveGone(ctx context.Context, inv *seat.Inventory) (int, error) {
	deadline := time.Now().Add(proofWait)
	n := 0
	for _, s := range inv.Seats {
		for _, id := range []struct {
			what string
			live func() bool
		}{{"process", s.Process.Alive}, {"keeper", s.Keeper.Alive}} {
			for id.live() {
				if time.Now().After(deadline) || ctx.Err() != nil {
					return n, fmt.Errorf("seat %s's %s still runs", s.Name, id.what)
				}
				time.Sleep(10 * time.Millisecond)
			}
			n++
		}
	}
	return n, nil
}

// proveUnreachable dials the broker the seats used and says so once
// nothing answers there.
func proveUnreachable(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the inventory names no broker address (%q)", raw)
	}
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err == nil {
		c.Close()
		return u.Host, fmt.Errorf("something still answers at %s, where the mesh's broker listened", u.Host)
	}
	return u.Host + " unreachable", nil
}

// preservesSeats reports whether this process was asked to preserve its
// seats as it stops.
func (h *Host) preservesSeats() bool {
	if h.cfg.Supervise != nil {
		return false
	}
	b, err := os.ReadFile(preserveFile(h.cfg.Paths))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && pid == os.Getpid()
}

// PreserveSeatsOnClose makes Close preserve the seats for the next start,
// as `down --preserve-state` asks of a mesh by file; for a host run in
// this process, which then proves the stop and marks the inventory ready
// itself (seat.MarkReady).
func (h *Host) PreserveSeatsOnClose() { h.preserveOnClose.Store(true) }

// preserve has the manager preserve its seats into the inventory.
func (h *Host) preserve(mgr *seat.Manager) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inv, err := mgr.Preserve(ctx, PreserveDir(h.cfg.Paths))
	if err != nil {
		h.logf("preserving the seats: %v", err)
	}
	h.logf("stopping; %d seat(s) preserved for the next up: %s", len(inv.Seats), strings.Join(inv.Names(), ", "))
}

// loadResume reads the space's inventory as the mesh starts: a ready one
// is resumed by the manager, one without its mark (a stop killed half way)
// is discarded, saying so.
func (h *Host) loadResume() error {
	dir := PreserveDir(h.cfg.Paths)
	inv, ready, err := seat.ReadInventory(dir)
	if err != nil {
		h.logf("the preserved inventory cannot be read (%v): discarding it; its seats start no more", err)
		return seat.RemoveInventory(dir)
	}
	if inv == nil {
		return nil
	}
	if !ready {
		h.logf("discarding the inventory of a `down --preserve-state` that did not finish (written %s, %d seat(s): %s): it was never marked ready",
			inv.Written.Local().Format(time.RFC3339), len(inv.Seats), strings.Join(inv.Names(), ", "))
		return seat.RemoveInventory(dir)
	}
	h.resume = inv
	return nil
}

// resumed removes the inventory the manager's start consumed.
func (h *Host) resumed() {
	if h.resume == nil {
		return
	}
	h.logf("resuming %d seat(s) preserved at %s: %s", len(h.resume.Seats), h.resume.Written.Local().Format(time.RFC3339), strings.Join(h.resume.Names(), ", "))
	if err := seat.RemoveInventory(PreserveDir(h.cfg.Paths)); err != nil {
		h.logf("removing the consumed inventory: %v", err)
	}
}

// DiscardPreserved removes the space's inventory, ready or not (`up
// --fresh`), and returns what it held; nil when there was none. It refuses
// while the mesh runs: its inventory is being written or was consumed.
func DiscardPreserved(p config.Paths) (*seat.Inventory, error) {
	s, err := Probe(p)
	if err != nil {
		return nil, err
	}
	if s.Running {
		return nil, nil
	}
	dir := PreserveDir(p)
	inv, _, err := seat.ReadInventory(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		inv = &seat.Inventory{}
	}
	if rerr := seat.RemoveInventory(dir); rerr != nil {
		return inv, rerr
	}
	return inv, nil
}

// Unpreservable names the running seats that `down --preserve-state`
// cannot preserve: those of managers other than the mesh's own (supervise
// processes), which the request to the mesh does not reach.
func Unpreservable(p config.Paths, rows []client.CensusRow) ([]string, error) {
	b, err := os.ReadFile(ManagerFile(p))
	if err != nil {
		return nil, fmt.Errorf("the mesh's manager instance: %w", err)
	}
	var f struct {
		InstanceID string `json:"instanceId"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.InstanceID == "" {
		return nil, fmt.Errorf("the mesh's manager instance in %s: %v", ManagerFile(p), err)
	}
	var out []string
	for _, r := range rows {
		if r.Manager != f.InstanceID {
			out = append(out, r.Name)
		}
	}
	return out, nil
}
