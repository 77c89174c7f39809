package mesh

import (
	"context"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// InboxWindowChars bounds one inbox reply to a model (spec §12).
const InboxWindowChars = 48000

// Timings of the inbox window.
const (
	// releaseGrace is how long a stored item given back by one read is
	// expected to come again; the next read waits a little for it.
	releaseGrace = 5 * time.Second
	// returnWait bounds that wait.
	returnWait = 1500 * time.Millisecond
)

// WindowItem is one item an inbox read returned.
type WindowItem struct {
	Kind       wire.Kind `json:"kind"`
	Line       string    `json:"line"` // rendered: peer text can neither start a line nor forge an attribution
	Historical bool      `json:"historical,omitempty"`
}

// KeptItem names an item too large for any reply; it stays in the inbox.
type KeptItem struct {
	What  string `json:"what"`
	Chars int    `json:"chars"`
}

// Window is one inbox read: what it returned, in order, and what it left.
type Window struct {
	Items     []WindowItem `json:"items"`
	Kept      []KeptItem   `json:"kept,omitempty"`
	More      int          `json:"more,omitempty"`      // items left for a later read
	Muted     int          `json:"muted,omitempty"`     // posts on muted channels (dropped unless peeking)
	Dropped   int          `json:"dropped,omitempty"`   // live posts that no longer fit the inbox
	Peek      bool         `json:"peek,omitempty"`      // nothing was cleared
	Unsettled string       `json:"unsettled,omitempty"` // why some returned items were not cleared (they come again)
	Budget    int          `json:"budget"`              // characters the items had
}

// windowState is what inbox reads keep between them. read serialises the
// reads; mu guards the fields. Lock order: read, then mu.
type windowState struct {
	read     sync.Mutex
	mu       sync.Mutex
	carry    []*Item              // live items taken but not returned: nothing could bring them back
	released map[string]time.Time // ids of stored items given back, until they come again
}

func (w *windowState) carried() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.carry)
}

// TakeWindow is one inbox read for a model (spec §12): DMs and tasks
// first, then channel posts, then history, as many as fit in budget
// characters (at most InboxWindowChars). It clears only what it returned;
// an item larger than any reply is named and kept; with peek it clears
// nothing. Posts on a muted channel are dropped (with peek, only skipped).
func (e *Endpoint) TakeWindow(ctx context.Context, budget int, peek bool) (Window, error) {
	if budget <= 0 || budget > InboxWindowChars {
		budget = InboxWindowChars
	}
	w := &e.window
	w.read.Lock()
	defer w.read.Unlock()
	items, err := e.collectWindow(ctx)
	if err != nil {
		return Window{}, err
	}
	// Counted before anything is given back: what comes back is not more.
	queued := e.Pending()
	win := Window{Peek: peek, Budget: budget, Items: []WindowItem{}}
	var shown, keep, muted []*Item
	for _, it := range items {
		if !it.Directed() && e.ChannelMode(it.Subject.Channel) == ModeMuted {
			muted = append(muted, it)
			continue
		}
		keep = append(keep, it)
	}
	win.Muted = len(muted)
	sort.SliceStable(keep, func(i, j int) bool { return windowRank(keep[i]) < windowRank(keep[j]) })
	used, full := 0, false
	var left []*Item
	for _, it := range keep {
		line := render.Item(it.Kind, it.Subject, it.Msg, it.Historical, e.me)
		n := utf8.RuneCountInString(line) + 1
		switch {
		case n > budget:
			win.Kept = append(win.Kept, KeptItem{What: describeItem(it), Chars: n - 1})
			left = append(left, it)
		case full || used+n > budget:
			full = true
			win.More++
			left = append(left, it)
		default:
			used += n
			shown = append(shown, it)
			win.Items = append(win.Items, WindowItem{Kind: it.Kind, Line: line, Historical: it.Historical})
		}
	}
	for _, it := range shown {
		if peek {
			win.Dropped += w.giveBack(it)
		} else if err := it.Ack(); err != nil && win.Unsettled == "" {
			win.Unsettled = "shown but not cleared, so it will come again: " + err.Error()
		}
	}
	for _, it := range muted {
		if peek {
			win.Dropped += w.giveBack(it)
		} else {
			_ = it.Ack()
		}
	}
	for _, it := range left {
		win.Dropped += w.giveBack(it)
	}
	win.More += queued
	return win, nil
}

// collectWindow takes the carried live items and everything queued. A
// stored item an earlier read gave back is on its way again: wait briefly
// for it, so a peek followed by a read returns it.
func (e *Endpoint) collectWindow(ctx context.Context) ([]*Item, error) {
	w := &e.window
	w.mu.Lock()
	items := w.carry
	w.carry = nil
	w.mu.Unlock()
	got, err := e.CollectN(ctx, MaxInbox, 0)
	if err != nil {
		w.mu.Lock()
		w.carry = append(items, w.carry...)
		w.mu.Unlock()
		return nil, err
	}
	items = append(items, got...)
	deadline := time.Now().Add(returnWait)
	for len(items) < MaxInbox && w.awaiting(items) && time.Now().Before(deadline) {
		got, err := e.CollectN(ctx, MaxInbox-len(items), 100*time.Millisecond)
		if err != nil {
			break
		}
		items = append(items, got...)
	}
	return items, nil
}

// awaiting reports whether a recently given-back stored item is still on
// its way; it forgets those that came back or whose grace has passed.
func (w *windowState) awaiting(items []*Item) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, it := range items {
		delete(w.released, it.Msg.ID)
	}
	now := time.Now()
	for id, at := range w.released {
		if now.Sub(at) > releaseGrace {
			delete(w.released, id)
		}
	}
	return len(w.released) > 0
}

// giveBack leaves an item for a later read: a stored one goes back to
// storage, a live one is carried. It returns how many live items the
// carry had to drop to stay within MaxInbox.
func (w *windowState) giveBack(it *Item) int {
	if it.Durable {
		if it.Release() == nil && it.Msg.ID != "" {
			w.mu.Lock()
			if w.released == nil {
				w.released = map[string]time.Time{}
			}
			w.released[it.Msg.ID] = time.Now()
			w.mu.Unlock()
		}
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.carry = append(w.carry, it)
	if n := len(w.carry) - MaxInbox; n > 0 {
		w.carry = w.carry[n:]
		return n
	}
	return 0
}

// windowRank orders a read: directed items, then channel posts, then
// history.
func windowRank(it *Item) int {
	switch {
	case it.Directed():
		return 0
	case it.Historical:
		return 2
	}
	return 1
}

// describeItem names an item without its text.
func describeItem(it *Item) string {
	from := wire.SenderLabel(it.Subject.Sender, it.Msg.From)
	switch it.Kind {
	case wire.KindDM:
		return "a DM from " + from
	case wire.KindAnycast:
		return "a task for @" + wire.CleanLabel(it.Subject.Role) + " from " + from
	}
	what := "a post to #" + wire.CleanLabel(it.Subject.Channel) + " from " + from
	if it.Historical {
		what = "an earlier " + what[2:]
	}
	return what
}
