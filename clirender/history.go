package clirender

import (
	"fmt"
	"io"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// History prints a channel's retained posts as `cotal history` does,
// oldest first, as me reads them; complete false says older ones were
// left out by the limit.
func History(w io.Writer, channel string, items []mesh.HistoryItem, complete bool, limit int, me wire.Principal) {
	if len(items) == 0 {
		fmt.Fprintf(w, "#%s has no retained posts\n", channel)
	}
	for _, h := range items {
		ts := time.UnixMilli(h.Msg.TS).Format("2006-01-02 15:04:05")
		line := render.Item(wire.KindChannel, wire.Subject{Channel: channel, Sender: h.SenderPrincipal()}, h.Msg, false, me)
		fmt.Fprintf(w, "%6d %s %s\n", h.Seq, ts, line)
	}
	if !complete {
		fmt.Fprintf(w, "(older posts not shown; --limit %d)\n", limit)
	}
}

// ChatLimits is what `history limit --json` prints.
type ChatLimits struct {
	MaxAge       string `json:"maxAge"` // "" = no age limit
	MaxPerSender int64  `json:"maxPerSender"`
	Messages     uint64 `json:"messages"`
	Bytes        uint64 `json:"bytes"`
}

// Retention prints the space's channel retention, as JSON or as a line.
func Retention(w io.Writer, asJSON bool, maxAge time.Duration, maxPerSender int64, messages, bytes uint64) {
	l := ChatLimits{MaxPerSender: maxPerSender, Messages: messages, Bytes: bytes}
	kept := "forever"
	if maxAge > 0 {
		l.MaxAge, kept = maxAge.String(), "for "+maxAge.String()
	}
	if asJSON {
		JSON(w, l)
		return
	}
	fmt.Fprintf(w, "channel history: each sender's newest %d posts per channel, kept %s; now %d posts, %s\n",
		l.MaxPerSender, kept, l.Messages, render.Bytes(int64(l.Bytes)))
}
