package issue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/procid"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
)

// seatMinter mints seat identities with the space's authority and writes
// each creds file 0600 into the seat's own launch directory (0700), the
// one part of the store the seat can see, revoking the credential and
// removing the file when the seat stops; in open mode a seat needs no
// credential and gets a named identity.
type seatMinter struct {
	paths config.Paths
	nc    *nats.Conn
	open  bool
}

// NewSeatMinter is the Minter a manager of this space uses.
func NewSeatMinter(p config.Paths, nc *nats.Conn, open bool) seat.Minter {
	return &seatMinter{paths: p, nc: nc, open: open}
}

func (m *seatMinter) MintSeat(ctx context.Context, r seat.MintRequest) (seat.Minted, error) {
	p := wire.Principal{Owner: "local", Actor: r.Name}
	if m.open {
		return seat.Minted{Principal: p, UID: wire.NewLifecycleUID()}, nil
	}
	id := broker.Identity{
		Space: m.paths.Space, Principal: p, Role: r.Role, Subscribe: r.Subscribe,
		AllowSubscribe: r.AllowSubscribe, AllowPublish: r.AllowPublish, Capabilities: r.Capabilities,
		HostedBy: r.HostedBy,
	}
	pid := os.Getpid()
	c, _, err := mint(ctx, m.paths, id, m.nc, &seatHost{PID: pid, Start: processStart(pid)})
	if err != nil {
		return seat.Minted{}, err
	}
	dir := seat.LaunchDir(RunDir(m.paths), r.Name, c.Identity.UID)
	for _, d := range []string{RunDir(m.paths), filepath.Dir(dir), dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return seat.Minted{}, err
		}
	}
	path := seatCreds(m.paths, p, c.Identity.UID)
	if err := broker.WriteCreds(path, c); err != nil {
		_ = os.RemoveAll(dir)
		return seat.Minted{}, err
	}
	return seat.Minted{Principal: p, UID: c.Identity.UID, Creds: path}, nil
}

// Retire revokes a stopped seat's credential, closing any connection still
// holding it, and removes its creds file.
func (m *seatMinter) Retire(ctx context.Context, p wire.Principal, uid string) error {
	if m.open {
		return nil
	}
	err := Retire(ctx, m.paths, p, uid, m.nc)
	if rmErr := os.Remove(seatCreds(m.paths, p, uid)); rmErr != nil && !os.IsNotExist(rmErr) && err == nil {
		err = rmErr
	}
	return err
}

// Taken reports whether an unrevoked credential of name exists, minted by
// `cotal mint` or held by a live seat of any manager.
func (m *seatMinter) Taken(name string) bool {
	return !m.open && Held(m.paths, wire.Principal{Owner: "local", Actor: name})
}

// KeptBy records that the seat's process is now held by keeper, a process
// of its own: the credential then lives as long as that keeper does.
func (m *seatMinter) KeptBy(p wire.Principal, uid string, keeper procid.ID) error {
	if m.open {
		return nil
	}
	recs, err := liveMinted(m.paths, func(r mintedRecord) bool { return r.Principal == p && r.UID == uid })
	if err != nil || len(recs) == 0 {
		return err
	}
	f := recs[0]
	f.rec.Seat = &seatHost{PID: keeper.PID, Start: strconv.FormatUint(keeper.Start, 10)}
	b, _ := json.MarshalIndent(f.rec, "", "  ")
	return config.WriteFileAtomic(f.path, b, 0o600)
}

// Holds reports whether the lifecycle's credential is still unrevoked.
func (m *seatMinter) Holds(p wire.Principal, uid string) bool {
	if m.open {
		return true
	}
	recs, err := liveMinted(m.paths, func(r mintedRecord) bool { return r.Principal == p && r.UID == uid })
	return err == nil && len(recs) > 0
}

// Reserved says why no seat may take name: the operator's, the mesh's own,
// or held under another profile (CheckName). An open mesh has no
// credentials, but the mesh's own names and the operator's stay reserved.
func (m *seatMinter) Reserved(name string) error {
	p := wire.Principal{Owner: "local", Actor: name}
	if m.open {
		if why := wire.ReservedActor(name); why != "" {
			return fmt.Errorf("%w: %q cannot be spawned: %s", ErrReservedName, name, why)
		}
		if strings.EqualFold(name, OperatorPrincipal().Actor) {
			return fmt.Errorf("%w: %q is the space's operator; pick another name", ErrReservedName, name)
		}
		return nil
	}
	return CheckName(m.paths, p, wire.ProfileAgent)
}

// seatCreds is where a seat's creds file lives: in its launch directory.
func seatCreds(p config.Paths, principal wire.Principal, uid string) string {
	return filepath.Join(seat.LaunchDir(RunDir(p), principal.Actor, uid), "seat.creds")
}

// processStart is a process's start time as the OS records it ("" where
// it does not say): with the pid it names one process, not a reused pid.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	// Fields after the command name start at the state, field 3; the
	// start time is field 22.
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// alive reports whether the seat's hosting process still runs.
func (h *seatHost) alive() bool {
	return broker.PIDAlive(h.PID) && (h.Start == "" || processStart(h.PID) == h.Start)
}

// RetireOrphanSeats revokes the credentials of seats whose hosting process
// is gone (a crash, a kill): no seat holds them any more, only whoever
// copied one. Without this, the names of a crashed mesh's seats would stay
// taken. A lifecycle keep names (a seat of a ready preserved inventory,
// to be resumed) is left as it is; keep may be nil.
func RetireOrphanSeats(ctx context.Context, p config.Paths, nc *nats.Conn, keep func(wire.Principal, string) bool) error {
	recs, err := liveMinted(p, func(r mintedRecord) bool {
		return r.Seat != nil && !r.Seat.alive() && (keep == nil || !keep(r.Principal, r.UID))
	})
	if err != nil || len(recs) == 0 {
		return err
	}
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		return err
	}
	if err := end(ctx, p, auth, recs, nc); err != nil {
		return err
	}
	for _, f := range recs {
		_ = os.Remove(seatCreds(p, f.rec.Principal, f.rec.UID))
	}
	return nil
}

// RunDir holds what lives only while its process does: the seats' launch
// directories, where the seat minter writes each seat's creds.
func RunDir(p config.Paths) string { return filepath.Join(p.StoreDir, "run") }
