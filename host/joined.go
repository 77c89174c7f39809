package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrNotProvisioned is returned by Start with ManagerOnly when the space
// has no streams on the servers yet: a manager-only host joins a mesh,
// it never makes one.
var ErrNotProvisioned = errors.New("the space is not provisioned there")

// ErrNoKeys is returned by Start with ManagerOnly on an authenticated
// space whose keys this machine does not hold: its manager mints its
// seats' credentials with them, so they are copied from the first host.
var ErrNoKeys = errors.New("this machine does not hold the space's keys")

// checkJoinable refuses a manager-only host before it dials anything: it
// needs servers, and on an authenticated space the space's keys (which
// broker.LoadAuthority would otherwise create afresh, keys no server of
// the cluster trusts).
func (h *Host) checkJoinable() error {
	cfg := h.cfg
	if len(cfg.Servers) == 0 {
		return errors.New("a manager-only host joins a mesh on servers it did not start: name them (--url)")
	}
	if cfg.Open {
		return nil
	}
	if _, err := os.Stat(broker.KeysFile(cfg.Paths)); err != nil {
		return fmt.Errorf("%w (%s): copy the file auth/keys.json from the store of the space's first host to that path, mode 0600", ErrNoKeys, broker.KeysFile(cfg.Paths))
	}
	return nil
}

// checkProvisioned is what a manager-only host does instead of
// provisioning: every stream and bucket of the space must be there, made
// by the space's first host; none is created or changed from here.
func checkProvisioned(ctx context.Context, nc *nats.Conn, space, url string) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	var missing []string
	for _, name := range broker.SpaceStreams(space) {
		if _, err := js.Stream(ctx, name); errors.Is(err, jetstream.ErrStreamNotFound) {
			missing = append(missing, name)
		} else if err != nil {
			return fmt.Errorf("reading stream %s: %w", name, err)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s has no %s: start the space's first host there with `cotal up --url %s` (without --manager-only)", ErrNotProvisioned, url, strings.Join(missing, ", "), url)
	}
	return nil
}

// operatorUID is the lifecycle the local operator's credential is minted
// for: the one its creds file here holds, else on a mesh other hosts share
// the one the space's records name, so every host's CLI and dashboard act
// as one operator (one DM durable, one record); else a fresh one.
func (h *Host) operatorUID(ctx context.Context, nc *nats.Conn, p wire.Principal) string {
	if old, err := broker.ReadCredsIdentity(h.cfg.Paths.OperatorCreds()); err == nil && old.Principal == p && wire.ValidLifecycleUID(old.UID) {
		return old.UID
	}
	if !h.broker.External() {
		return ""
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return ""
	}
	rec, found, err := broker.LookupIdentity(ctx, js, h.cfg.Paths.Space, p)
	if err != nil || !found || rec.Retired || rec.Profile != wire.ProfileOperator || !wire.ValidLifecycleUID(rec.LifecycleUID) {
		return ""
	}
	return rec.LifecycleUID
}

// LocalManager is the manager instance this machine's mesh of the space
// serves, when that mesh runs on servers other hosts may share: a spawn
// made here goes to it, not to whichever manager of the cluster answers
// first. "" for the embedded broker (every manager there is this
// machine's) or when no mesh of the space runs here.
func LocalManager(p config.Paths) string {
	st, err := Probe(p)
	if err != nil {
		return ""
	}
	if rec, err := st.Serving(); err != nil || !rec.External {
		return ""
	}
	if _, err := os.Stat(ManagerFile(p)); err != nil {
		return ""
	}
	id, err := ep.LoadOrCreateInstanceID(ManagerFile(p))
	if err != nil {
		return ""
	}
	return id
}
