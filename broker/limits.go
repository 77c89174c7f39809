package broker

import (
	"encoding/json"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/wire"
)

// The space's fair limits. One credential must not exhaust what every
// identity of the space shares: connections (each one a file descriptor of
// the mesh process) and subscriptions (memory of the server).
const (
	// MaxConnsPerUser is how many connections one agent's or observer's
	// credential may hold at once. A seat needs a few (its MCP server, a
	// `cotal` command run inside it); past this the newest is closed.
	MaxConnsPerUser = 32
	// MaxConnsAccount bounds every connection of the space's account; the
	// server also stops at half the process's descriptor limit.
	MaxConnsAccount = 4096
	// MaxSubsPerConn is how many subscriptions an agent's or observer's
	// connection may hold (a channel joined is one).
	MaxSubsPerConn = 1024
	// MaxSubsAccount bounds the subscriptions of the whole account.
	MaxSubsAccount = 1 << 20
)

// accountLimits are the limits every issued account JWT carries, the same
// in every process that issues one (a re-issue by `cotal mint` must not
// lift them).
func accountLimits(ac *jwt.AccountClaims) {
	ac.Limits.Conn = MaxConnsAccount
	ac.Limits.Subs = MaxSubsAccount
	ac.Limits.Payload = 1 << 20
}

// serverMaxConns is the server-wide connection limit: half the process's
// descriptor limit (the store's files need the rest), at most 64K.
func serverMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return server.DEFAULT_MAX_CONNECTIONS
	}
	return int(min(rl.Cur/2, server.DEFAULT_MAX_CONNECTIONS))
}

// connLimiter closes the connections one agent's or observer's credential
// opens past MaxConnsPerUser. A user JWT cannot carry a connection limit,
// so the broker follows the server's connect and disconnect events through
// the system account and closes the newest connection over the limit. The
// operator's credential (shared by every CLI command and dashboard) is
// bounded by the account's limit only. mu guards conns and warned.
type connLimiter struct {
	srv  *server.Server
	logf func(format string, args ...any)
	max  int

	mu     sync.Mutex
	conns  map[string][]uint64 // user key -> its connection ids, oldest first
	warned map[string]time.Time
}

// limitConnsPerUser starts the limiter on sys, a system-account connection.
func (b *Broker) limitConnsPerUser(sys *nats.Conn, logf func(string, ...any)) error {
	l := &connLimiter{srv: b.srv, logf: logf, max: MaxConnsPerUser, conns: map[string][]uint64{}, warned: map[string]time.Time{}}
	acc := b.auth.AccountKey()
	if _, err := sys.Subscribe(fmt.Sprintf("$SYS.ACCOUNT.%s.CONNECT", acc), l.connected); err != nil {
		return err
	}
	if _, err := sys.Subscribe(fmt.Sprintf("$SYS.ACCOUNT.%s.DISCONNECT", acc), l.disconnected); err != nil {
		return err
	}
	return sys.Flush()
}

// clientEvent is the part of a connect or disconnect event the limiter reads.
type clientEvent struct {
	Client struct {
		ID   uint64   `json:"id"`
		User string   `json:"user"`
		Tags []string `json:"tags"`
		Kind string   `json:"kind"`
	} `json:"client"`
}

func (l *connLimiter) connected(m *nats.Msg) {
	var ev clientEvent
	if json.Unmarshal(m.Data, &ev) != nil || ev.Client.User == "" || ev.Client.Kind != "Client" {
		return
	}
	for _, t := range ev.Client.Tags {
		if t == wire.TagProfile+string(wire.ProfileOperator) {
			return
		}
	}
	l.mu.Lock()
	ids := append(l.conns[ev.Client.User], ev.Client.ID)
	l.conns[ev.Client.User] = ids
	over := len(ids) > l.max
	warn := over && time.Since(l.warned[ev.Client.User]) > time.Minute
	if warn {
		l.warned[ev.Client.User] = time.Now()
	}
	l.mu.Unlock()
	if !over {
		return
	}
	_ = l.srv.DisconnectClientByID(ev.Client.ID)
	if warn && l.logf != nil {
		l.logf("credential %s holds more than %d connections: closing each one past the limit", ev.Client.User, l.max)
	}
}

func (l *connLimiter) disconnected(m *nats.Msg) {
	var ev clientEvent
	if json.Unmarshal(m.Data, &ev) != nil || ev.Client.User == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := l.conns[ev.Client.User]
	for i, id := range ids {
		if id == ev.Client.ID {
			ids = append(ids[:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(l.conns, ev.Client.User)
		return
	}
	l.conns[ev.Client.User] = ids
}
