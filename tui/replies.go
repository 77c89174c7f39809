package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Replies to the person: DMs addressed to the operator (an agent's
// cotal_dm, the answer to a task). Every dashboard of the space shows each
// of them in its feed, from the DM stream; the operator's DM durable,
// shared by every process acting as the operator, says which are unread,
// and NEEDS YOU counts them. Reading them (r) takes them from the durable
// and acks them, once, for every dashboard; their senders' receipts say so.

// replyPollEvery is how often the unread count is read from the durable.
const replyPollEvery = time.Second

// unreadReplies is the operator's DM durable as last read.
type unreadReplies struct {
	N     int
	Floor uint64 // every DM up to this stream sequence is settled
}

// watchReplies queues every DM to the operator not yet settled when it
// starts, then each new one, as feed posts.
func (c *collector) watchReplies(ctx context.Context, e *mesh.Endpoint) {
	u, err := e.UnreadDirect(ctx)
	if errors.Is(err, mesh.ErrNoDirectInbox) {
		return
	}
	if err != nil {
		c.addError("replies to you will not show: " + err.Error())
		return
	}
	err = e.WatchDirect(ctx, u.Floor+1, func(seq uint64, d wire.Delivery) {
		p := postOf(wire.KindDM, d.Subject, d.Msg, false)
		p.To, p.Seq = "you", seq
		c.mu.Lock()
		c.queueLocked(p)
		c.mu.Unlock()
	})
	if err != nil && ctx.Err() == nil {
		c.addError("replies to you will not show: " + err.Error())
	}
}

// pollUnread reads the unread count for the next batch every
// replyPollEvery; a failing read is reported once.
func (c *collector) pollUnread(ctx context.Context, e *mesh.Endpoint) {
	t := time.NewTicker(replyPollEvery)
	defer t.Stop()
	said := ""
	for {
		cctx, cancel := context.WithTimeout(ctx, seatTimeout)
		u, err := e.UnreadDirect(cctx)
		cancel()
		switch {
		case errors.Is(err, mesh.ErrNoDirectInbox):
			return
		case err != nil && ctx.Err() == nil:
			if msg := "unread replies: " + err.Error(); msg != said {
				c.addError(msg)
				said = msg
			}
		case err == nil:
			said = ""
			c.mu.Lock()
			c.unread = &unreadReplies{N: u.N, Floor: u.Floor}
			c.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// unreadEntry is the NEEDS YOU row of the replies waiting for the person,
// when any do: since the oldest of them the feed shows.
func (n *needsView) unreadEntry(f *feedView) (laneEntry, bool) {
	if n.unread.N == 0 {
		return laneEntry{}, false
	}
	e := laneEntry{id: "replies", need: needUnread, name: "you", since: n.sh.now}
	var from []string
	for i := range f.entries {
		p := &f.entries[i].Post
		if p.Seq == 0 || p.Seq <= n.unread.Floor {
			continue
		}
		if p.At.Before(e.since) {
			e.since = p.At
		}
		if len(from) < 3 && !contains(from, p.From) {
			from = append(from, p.From)
		}
	}
	// The key first: the lane is narrow, and a cut line still says it.
	e.what = fmt.Sprintf("r reads %d", n.unread.N)
	if len(from) > 0 {
		e.what += " from " + joinNames(from)
	}
	return e, true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func joinNames(l []string) string {
	out := ""
	for i, s := range l {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

// readReplies opens the unread replies in full and takes them from the
// durable, so they are acked for every dashboard.
func (m *Model) readReplies() tea.Cmd {
	floor := m.needs.unread.Floor
	var unread []Post
	for i := range m.feed.entries {
		if p := m.feed.entries[i].Post; p.Seq > floor {
			unread = append(unread, p)
		}
	}
	if m.needs.unread.N == 0 && len(unread) == 0 {
		m.status.setNote("no unread replies")
		return nil
	}
	m.openPage("REPLIES TO YOU", func(w int) []string {
		var lines []string
		if len(unread) == 0 {
			lines = append(lines, fmt.Sprintf("%s waiting in your inbox; they show in the feed as they are read.", render.Plural(m.needs.unread.N, "reply")))
		}
		for i := range unread {
			e := feedEntry{Post: unread[i], count: 1, last: unread[i].At}
			lines = append(lines, m.feed.full(&e, w)...)
			lines = append(lines, "")
		}
		return lines
	}, false)
	e := m.sh.cfg.Endpoint
	if e == nil {
		return nil
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), seatCallTimeout)
		defer cancel()
		if err := e.ReadDirect(ctx); err != nil {
			return readRepliesMsg{err: err}
		}
		return readRepliesMsg{}
	}
}

// readRepliesMsg is the end of a read of the replies.
type readRepliesMsg struct{ err error }
