package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// ConnectionStatus is cotal_connection_status's answer: the state and the
// raw facts it was judged from.
type ConnectionStatus struct {
	State          string              `json:"state"`
	Mode           string              `json:"mode"` // standalone or managed
	Identity       string              `json:"identity,omitempty"`
	Space          string              `json:"space,omitempty"`
	Manager        string              `json:"manager,omitempty"`
	Broker         BrokerFacts         `json:"broker"`
	Connector      ConnectorFacts      `json:"connector"`
	Presence       *mesh.PresenceState `json:"presence,omitempty"`
	Buffered       BufferedFacts       `json:"buffered"`
	Joined         []string            `json:"joined,omitempty"`
	Dials          int                 `json:"dials"`
	UpSinceMs      int64               `json:"upSinceMs,omitempty"`
	LastError      string              `json:"lastError,omitempty"`
	LastErrorAgoMs int64               `json:"lastErrorAgoMs,omitempty"`
}

// BrokerFacts describe the NATS connection.
type BrokerFacts struct {
	Connected  bool   `json:"connected"`
	URL        string `json:"url,omitempty"`
	Reconnects uint64 `json:"reconnects"`
	DownForMs  int64  `json:"downForMs,omitempty"`
}

// ConnectorFacts say whether what holds the identity's state answers.
type ConnectorFacts struct {
	Where     string `json:"where,omitempty"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

// BufferedFacts count what waits locally.
type BufferedFacts struct {
	Inbox    int            `json:"inbox"`
	Rejected map[string]int `json:"rejected,omitempty"`
}

// probeTimeout bounds the liveness probes of a status answer.
const probeTimeout = 3 * time.Second

func (s *Server) mode() string {
	if s.opts.Manager != "" {
		return "managed"
	}
	return "standalone"
}

// connectionStatus judges the link's state from fresh probes.
func (s *Server) connectionStatus(ctx context.Context) (ConnectionStatus, mesh.ConnectorState, bool) {
	f := s.link.facts()
	cs := ConnectionStatus{Mode: s.mode(), Manager: s.opts.Manager, Identity: s.opts.Self.ID, Space: s.opts.Self.Space, Dials: f.dials}
	if f.lastErr != nil {
		cs.LastError = f.lastErr.Error()
		cs.LastErrorAgoMs = time.Since(f.lastErrAt).Milliseconds()
	}
	var st mesh.ConnectorState
	switch {
	case f.stopped:
		cs.State = StateStopped
		return cs, st, false
	case f.e == nil && f.everUp:
		cs.State = StateDisconnected
		return cs, st, false
	case f.e == nil:
		cs.State = StateConnecting
		return cs, st, false
	}
	cs.Identity, cs.Space = f.e.Me().ID(), f.e.Space()
	cs.UpSinceMs = f.upSince.UnixMilli()
	nc := f.e.Conn()
	cs.Broker = BrokerFacts{Connected: nc.IsConnected(), URL: nc.ConnectedUrlRedacted(), Reconnects: nc.Reconnects}
	if !f.downSince.IsZero() {
		cs.Broker.DownForMs = time.Since(f.downSince).Milliseconds()
	}
	cs.Connector.Where = f.c.where()
	if !cs.Broker.Connected {
		cs.State = StateDisconnected
		return cs, st, false
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	st, err := f.c.state(pctx)
	if err == nil && s.opts.Manager == "" && f.e.State().Profile != wire.ProfileOpen {
		// Standalone, the connector is local: what must answer is the
		// delivery service that keeps the stored messages.
		_, err = f.e.Memberships(pctx)
	}
	if err != nil {
		cs.State, cs.Connector.Error = StateDegraded, err.Error()
		return cs, st, false
	}
	cs.State, cs.Connector.Reachable = StateReady, true
	cs.Presence = st.Presence
	cs.Buffered.Inbox = st.Pending
	if len(st.Rejected) > 0 {
		cs.Buffered.Rejected = map[string]int{}
		for k, v := range st.Rejected {
			cs.Buffered.Rejected[string(k)] = v
		}
	}
	cs.Joined = joinedList(st)
	return cs, st, true
}

func toolConnectionStatus(ctx context.Context, s *Server, _ *session, _ error) (string, error) {
	cs, _, _ := s.connectionStatus(ctx)
	b, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func toolOrientation(ctx context.Context, s *Server, ss *session, down error) (string, error) {
	var b strings.Builder
	tools := "Tools: " + strings.Join(s.names, ", ") + ". Capabilities: messaging only (no spawn or despawn from here)."
	if ss == nil {
		b.WriteString(strings.TrimSuffix(down.Error(), ".") + ". What follows is what this server knows without the mesh.\n")
		id := s.opts.Self
		if id.ID != "" {
			fmt.Fprintf(&b, "You are %s (id %s%s) in space %q, as your credential says.\n", id.Name, id.ID, roleText(id.Role), id.Space)
		}
		b.WriteString(tools)
		return b.String(), nil
	}
	st, err := ss.c.state(ctx)
	if err != nil {
		fmt.Fprintf(&b, "Not fully connected: %s does not answer (%v). What follows is what this server knows without it.\n", ss.c.where(), err)
		me := ss.e.Me()
		fmt.Fprintf(&b, "You are %s (id %s%s) in space %q.\n", ss.e.Card().Name, me.ID(), roleText(ss.e.Role()), ss.e.Space())
		b.WriteString(tools)
		return b.String(), nil
	}
	fmt.Fprintf(&b, "You are %s (id %s%s) on the cotal mesh, space %q, through %s.\n", st.Name, st.ID, roleText(st.Role), st.Space, ss.c.where())
	if st.Presence != nil {
		b.WriteString(statusText(*st.Presence) + "\n")
	}
	if len(st.Channels) == 0 {
		b.WriteString("Joined: no channel yet (cotal_join one; cotal_channels lists them).\n")
	} else {
		var on []string
		for _, j := range st.Channels {
			var tags []string
			if j.Durable {
				tags = append(tags, "durable")
			}
			if m, ok := st.Modes[j.Channel]; ok {
				tags = append(tags, string(m))
			}
			c := "#" + j.Channel
			if len(tags) > 0 {
				c += " (" + strings.Join(tags, ", ") + ")"
			}
			on = append(on, c)
		}
		b.WriteString("Joined: " + strings.Join(on, ", ") + ".")
		if d := defaultChannel(st); d != "" {
			b.WriteString(" cotal_send without a channel posts to #" + d + ".")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "May read (allowSubscribe): %s. May post (allowPublish): %s.\n", aclText(st.AllowSubscribe), aclText(st.AllowPublish))
	if st.Pending > 0 {
		fmt.Fprintf(&b, "Waiting for you: %d message(s): call cotal_inbox.\n", st.Pending)
	} else {
		b.WriteString("Waiting for you: nothing right now.\n")
	}
	if peers, view, err := ss.e.Roster(ctx); err != nil {
		fmt.Fprintf(&b, "Roster: unreadable (%v).\n", err)
	} else {
		b.WriteString(rosterSummary(peers, view, st.ID) + "\n")
	}
	b.WriteString(tools)
	return b.String(), nil
}

func roleText(role string) string {
	if role == "" {
		return ""
	}
	return ", role " + role
}

func aclText(l wire.ACL) string {
	if l.CoversEvery() {
		return "every channel"
	}
	return describeACL(l)
}
