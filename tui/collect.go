package tui

import (
	"context"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// How far back the feed is prefilled, and how long that may take.
const (
	prefillWindow  = 30 * time.Minute
	prefillTimeout = 3 * time.Second
	seatPollEvery  = time.Second            // a ps over the managers
	screenEvery    = 250 * time.Millisecond // the focused seat's screen
	seatTimeout    = 5 * time.Second        // one ps or screen call
	idleBatchEvery = time.Second            // ages advance even when nothing happens
)

// collector reads the mesh off the UI goroutine and hands the program one
// batch per tick. The item reader and the seat and screen pollers add to
// the pending fields under mu; the tick loop alone reads the watcher and
// calls send.
type collector struct {
	items  func(context.Context) (*mesh.Item, error) // the endpoint's Next
	w      mesh.RosterView
	seats  SeatSource
	focus  *seatFocus // the seat whose screen to fetch; nil: none
	log    *LogSink
	tick   time.Duration
	send   func(tea.Msg)                         // blocks until the program takes it, or has ended
	follow func() (url string, pid int, ok bool) // where the mesh runs now; nil: it does not move
	up     func() bool                           // whether the connection is up; nil: always

	mu           sync.Mutex
	posts        []Post
	count        int
	errs         []string
	census       Census
	seatsChanged bool
	shot         *screenShot
	seatErr      string         // the last census error, said once
	unread       *unreadReplies // the operator's unread replies, when read since the last batch
}

// run collects until ctx ends. With e set, the feed is prefilled with
// recent history before live items are read.
func (c *collector) run(ctx context.Context, e *mesh.Endpoint) {
	go func() {
		if e != nil {
			c.prefill(ctx, e)
		}
		c.readItems(ctx)
	}()
	if e != nil {
		go c.watchReplies(ctx, e)
		go c.pollUnread(ctx, e)
		go c.watchDrops(ctx, e)
	}
	if c.seats != nil {
		go c.pollSeats(ctx)
		if c.focus != nil {
			go c.pollScreen(ctx)
		}
	}
	t := time.NewTicker(c.tick)
	defer t.Stop()
	peersDirty := true
	var lastSent, lastPeers time.Time
	var lastDown bool
	var lastState presence.ViewState
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.w.Changes():
			peersDirty = true
		case now := <-t.C:
			b := batchMsg{Now: now, View: c.w.View(), Down: c.up != nil && !c.up()}
			// A heartbeat that changes nothing else is no change the
			// watcher announces, but it makes every HEARD younger: the
			// roster is read again at least once per idle batch.
			if peersDirty || now.Sub(lastPeers) >= idleBatchEvery {
				b.Peers, b.PeersChanged, peersDirty, lastPeers = c.w.Roster(), true, false, now
				if c.follow != nil {
					if url, pid, ok := c.follow(); ok {
						b.Mesh = &meshAt{URL: url, PID: pid}
					}
				}
			}
			c.mu.Lock()
			b.Posts, b.Count, b.Errors = c.posts, c.count, c.errs
			b.Census, b.SeatsChanged, b.Shot, b.Unread = c.census, c.seatsChanged, c.shot, c.unread
			c.posts, c.count, c.errs, c.seatsChanged, c.shot, c.unread = nil, 0, nil, false, nil, nil
			c.mu.Unlock()
			b.Errors = append(b.Errors, c.log.drain()...)
			quiet := !b.PeersChanged && !b.SeatsChanged && b.Shot == nil && b.Unread == nil && len(b.Posts) == 0 && b.Count == 0 && len(b.Errors) == 0
			if quiet && b.View.State == lastState && b.Down == lastDown && now.Sub(lastSent) < idleBatchEvery {
				continue
			}
			c.send(b)
			lastSent, lastState, lastDown = now, b.View.State, b.Down
		}
	}
}

// readItems takes every arrival from the endpoint, acks it (the feed has
// it) and queues it for the next batch.
func (c *collector) readItems(ctx context.Context) {
	for {
		it, err := c.items(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.addError("reading the mesh stopped: " + err.Error())
			}
			return
		}
		p := postOf(it.Kind, it.Subject, it.Msg, it.Historical)
		if it.Echo && it.Kind == wire.KindDM {
			p.To = wire.CleanLabel(it.Subject.Recipient.Actor) // as sentPost names it
		}
		if err := it.Ack(); err != nil {
			c.addError("ack failed, the item will come again: " + err.Error())
		}
		c.mu.Lock()
		if !it.Historical {
			c.count++
		}
		c.queueLocked(p)
		c.mu.Unlock()
	}
}

// queueLocked keeps at most feedCap pending posts, the newest.
func (c *collector) queueLocked(p Post) {
	if len(c.posts) >= feedCap {
		c.posts = c.posts[1:]
	}
	c.posts = append(c.posts, p)
}

func (c *collector) addError(s string) {
	c.mu.Lock()
	c.errs = append(c.errs, s)
	c.mu.Unlock()
}

// pollSeats takes a census of the managers' seats every second and on
// each change. A failing census is reported once, not every second.
func (c *collector) pollSeats(ctx context.Context) {
	t := time.NewTicker(seatPollEvery)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, seatTimeout)
		cs, err := c.seats.Seats(cctx)
		cancel()
		c.mu.Lock()
		switch {
		case err != nil && ctx.Err() == nil:
			if msg := "seats: " + err.Error(); msg != c.seatErr {
				c.errs, c.seatErr = append(c.errs, msg), msg
			}
		case err == nil:
			c.census, c.seatsChanged, c.seatErr = cs, true, ""
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-c.seats.Changes():
		case <-t.C:
		}
	}
}

// pollScreen fetches the focused seat's screen four times a second while
// a seat is focused.
func (c *collector) pollScreen(ctx context.Context) {
	t := time.NewTicker(screenEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s, ok := c.focus.load()
		if !ok {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, seatTimeout)
		scr, err := c.seats.Screen(cctx, s)
		cancel()
		if ctx.Err() != nil {
			return
		}
		shot := &screenShot{Name: s.Name, Manager: s.Manager, Screen: scr, At: time.Now()}
		if err != nil {
			shot.Err = err.Error()
		}
		c.mu.Lock()
		c.shot = shot
		c.mu.Unlock()
	}
}

// prefill queues the recent posts of every channel, oldest first, so the
// feed does not start empty. The operator may read the CHAT stream.
func (c *collector) prefill(ctx context.Context, e *mesh.Endpoint) {
	ctx, cancel := context.WithTimeout(ctx, prefillTimeout)
	defer cancel()
	js, err := jetstream.New(e.Conn())
	if err != nil {
		return
	}
	var recent []Post
	err = mesh.ScanChannel(ctx, js, e.Space(), ">", 0, time.Now().Add(-prefillWindow), func(_ uint64, d wire.Delivery) bool {
		if len(recent) >= feedCap {
			recent = recent[1:]
		}
		recent = append(recent, postOf(d.Subject.Kind, d.Subject, d.Msg, true))
		return true
	})
	if err != nil && ctx.Err() == nil {
		c.addError("no feed history: " + err.Error())
	}
	c.mu.Lock()
	c.posts = append(recent, c.posts...)
	c.mu.Unlock()
}

// postOf turns a delivery into a feed line; the channel comes from the
// subject, never the payload.
func postOf(kind wire.Kind, s wire.Subject, m wire.Message, historical bool) Post {
	p := Post{ID: m.ID, Kind: string(kind), From: wire.SenderLabel(s.Sender, m.From), FromID: s.Sender.ID(), Text: wire.Inert(m.Text()), At: time.UnixMilli(m.TS), Historical: historical}
	switch kind {
	case wire.KindChannel:
		p.Channel = s.Channel
	case wire.KindAnycast:
		p.Channel = "@" + s.Role
	case wire.KindDM:
		p.Channel = "dm"
	}
	if m.TS == 0 {
		p.At = time.Now()
	}
	return p
}
