package tui

import (
	"time"

	"github.com/cotal-go/cotal/mesh/presence"
)

// shared is what every component reads: built once, passed by pointer.
// Only the UI goroutine touches it.
type shared struct {
	cfg    Config
	styles Styles
	keys   KeyMap
	now    time.Time // the clock of the last batch; ages are computed against it
	filter string    // the / filter, lowercased: the roster, SEATS and the feed show what matches
	self   string    // how the operator's posts are labelled (its actor), here as everywhere
	selfID string    // the operator's presence id
}

// Post is one feed line: a channel post (or a DM or task) as received.
type Post struct {
	ID         string
	Kind       string // channel, dm or anycast
	Channel    string // the channel, or "@role" for a task, "dm" for a DM
	From       string // name/role, cleaned
	FromID     string
	To         string // whom a DM of the operator's (from any terminal) went to
	Text       string
	At         time.Time // the sender's timestamp
	Historical bool      // history prefill, not a live arrival
	Seq        uint64    // a DM to the operator: its DM stream sequence (0 otherwise)
}

// batchMsg is everything the collector gathered since the last tick. The
// program gets at most one per tick, never one per mesh event.
type batchMsg struct {
	Now time.Time

	Peers        []presence.Peer // the roster when PeersChanged
	PeersChanged bool
	View         presence.View
	Down         bool // the connection to the mesh is down: it is being reconnected

	Posts []Post // newest last, at most feedCap of them
	Count int    // live posts received since the last batch, dropped ones included

	Census       Census // the seats when SeatsChanged
	SeatsChanged bool
	Shot         *screenShot // the focused seat's screen, when fetched since the last batch

	Unread *unreadReplies // the operator's unread replies, when read since the last batch
	Mesh   *meshAt        // where the mesh runs, as its record said at this batch (a client follows it)

	Errors []string
}

// meshAt is where the mesh runs: its URL and the pid serving it.
type meshAt struct {
	URL string
	PID int
}

// screenShot is one fetch of a seat's screen.
type screenShot struct {
	Name    string
	Manager string
	Screen  Screen
	Err     string
	At      time.Time
}
