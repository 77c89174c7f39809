package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrNoLease is returned by ReadLease when no service holds the space's
// delivery lease: durable channels are then live only.
var ErrNoLease = errors.New("no delivery lease")

// Lease is the space's delivery lease as a reader of its bucket sees it.
type Lease struct {
	Holder string // the holding service's instance, host/pid by default
	Ready  bool   // it serves: its delivery endpoint is up
}

// ReadLease reads the space's delivery lease. A value no service wrote
// reads as a lease not ready.
func ReadLease(ctx context.Context, js jetstream.JetStream, space string) (Lease, error) {
	kv, err := js.KeyValue(ctx, wire.DeliveryBucket(space))
	if err != nil {
		return Lease{}, err
	}
	ent, err := kv.Get(ctx, LeaseKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Lease{}, ErrNoLease
	}
	if err != nil {
		return Lease{}, err
	}
	var l lease
	if json.Unmarshal(ent.Value(), &l) != nil {
		return Lease{}, nil
	}
	return Lease{Holder: l.Holder, Ready: l.Ready}, nil
}

// HeldBy reports whether the lease names the delivery service of process
// pid on this machine (the default instance name, host/pid).
func (l Lease) HeldBy(pid int) bool { return l.Holder == defaultInstance(pid) }

// defaultInstance names the delivery service of process pid on this
// machine in the lease: host/pid.
func defaultInstance(pid int) string {
	me, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", me, pid)
}

// HolderGone reports whether the lease is held by a process that is gone:
// on this machine, one that does not run (alive says) or that is not the
// mesh holding the space's store (meshPID, 0 when unknown). A holder on
// another machine, or not named host/pid, cannot be checked and counts as
// alive.
func (l Lease) HolderGone(meshPID int, alive func(pid int) bool) bool {
	host, pidText, ok := strings.Cut(l.Holder, "/")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil {
		return false
	}
	if me, _ := os.Hostname(); host != me {
		return false
	}
	if meshPID > 0 && pid != meshPID {
		return true
	}
	return !alive(pid)
}
