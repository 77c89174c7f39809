package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/cotal-go/cotal/internal/typo"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// windowText is an inbox read as the model reads it through the tool.
func windowText(w mesh.Window) string { return WindowText(w, "call cotal_inbox again") }

// WindowText is an inbox read as a model reads it; again says how to read
// what is left ("call cotal_inbox again").
func WindowText(w mesh.Window, again string) string {
	var b strings.Builder
	if len(w.Items) == 0 && len(w.Kept) == 0 {
		b.WriteString("Inbox empty, no new messages.")
	} else if len(w.Items) > 0 {
		if w.Peek {
			fmt.Fprintf(&b, "%d peer message(s) waiting (peek: nothing was cleared):\n", len(w.Items))
		} else {
			fmt.Fprintf(&b, "%d new peer message(s):\n", len(w.Items))
		}
		for _, it := range w.Items {
			b.WriteString(it.Line + "\n")
		}
	}
	var notes []string
	if len(w.Kept) > 0 {
		kept := make([]string, 0, len(w.Kept))
		for i, k := range w.Kept {
			if i == 10 {
				kept = append(kept, fmt.Sprintf("and %d more", len(w.Kept)-i))
				break
			}
			kept = append(kept, fmt.Sprintf("%s (%d characters)", k.What, k.Chars))
		}
		notes = append(notes, fmt.Sprintf("Too large for one reply of %d characters, so kept in your inbox: %s.", w.Budget, strings.Join(kept, "; ")))
	}
	if w.More > 0 {
		notes = append(notes, fmt.Sprintf("%d more message(s) waiting: %s.", w.More, again))
	}
	if w.Muted > 0 {
		if w.Peek {
			notes = append(notes, fmt.Sprintf("%d post(s) on muted channels not shown.", w.Muted))
		} else {
			notes = append(notes, fmt.Sprintf("%d post(s) on muted channels dropped.", w.Muted))
		}
	}
	if w.Dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d live channel post(s) no longer fit your inbox and were dropped.", w.Dropped))
	}
	if w.Unsettled != "" {
		notes = append(notes, "Some of these were "+w.Unsettled+".")
	}
	if len(notes) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		b.WriteString(strings.Join(notes, "\n"))
	}
	return strings.TrimRight(b.String(), "\n")
}

// attentionMeaning says what an attention mode does, for the model.
func attentionMeaning(a string) string {
	switch presence.Attention(a) {
	case presence.DND:
		return "DMs, tasks and @mentions of you still reach you; channel posts wait for your next turn"
	case presence.Focus:
		return "DMs, tasks and @mentions of you reach you; channel posts wait in cotal_inbox"
	}
	return "DMs, tasks, @mentions and channel posts all reach you"
}

func statusText(p mesh.PresenceState) string {
	att := p.Attention
	if att == "" {
		att = string(presence.Open)
	}
	act := "none"
	if p.Activity != "" {
		act = fmt.Sprintf("%q", p.Activity)
	}
	return fmt.Sprintf("Status %s, attention %s (%s), activity %s.", p.Status, att, attentionMeaning(att), act)
}

// defaultChannel is where a send without a channel goes: the first
// concrete joined channel.
// defaultChannel is where cotal_send without a channel posts: the first
// concrete joined channel the post ACL permits.
func defaultChannel(st mesh.ConnectorState) string {
	return mesh.DefaultSendChannel(joinedList(st), st.AllowPublish)
}

func joinedList(st mesh.ConnectorState) []string {
	out := make([]string, len(st.Channels))
	for i, j := range st.Channels {
		out[i] = j.Channel
	}
	return out
}

// joinedOn reports whether a joined channel or family covers ch.
func joinedOn(st mesh.ConnectorState, ch string) bool {
	return wire.Covered(joinedList(st), ch)
}

func describeACL(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return "#" + strings.Join(l, ", #")
}

// sendNotes are what a sender should know about where a post went: that
// it went to a channel it is not on (replies there pass it by), and, when
// that channel is not registered and was not in use before (as far as its
// history can be read), the names it may have meant.
func sendNotes(ctx context.Context, ss *session, st mesh.ConnectorState, stErr error, ch string, seq uint64) []string {
	if stErr != nil || joinedOn(st, ch) {
		return nil
	}
	notOn := "you are not on #" + ch + ": replies posted there reach you only if they @mention you (cotal_join to follow it)."
	reg, err := ss.e.Registry(ctx)
	if err != nil {
		return []string{notOn}
	}
	names, _, err := reg.List(ctx)
	if err != nil || contains(names, ch) {
		return []string{notOn}
	}
	n := "#" + ch + " is not in the channel registry"
	switch used, known := usedBefore(ctx, ss.e, ch, seq); {
	case known && used:
		return []string{notOn}
	case known:
		n += " and nobody had posted there before"
	}
	if near := closeMatches(ch, append(names, joinedList(st)...)); len(near) > 0 {
		n += " (did you mean #" + strings.Join(near, " or #") + "?)"
	}
	return []string{n + ".", notOn}
}

// usedBefore reports whether a channel's retained history holds a post
// other than the one just sent (at seq); known is false when the history
// cannot be read (a channel outside the read ACL).
func usedBefore(ctx context.Context, e *mesh.Endpoint, ch string, seq uint64) (used, known bool) {
	items, _, err := e.History(ctx, ch, 2)
	if err != nil {
		return false, false
	}
	for _, it := range items {
		if it.Seq != seq {
			return true, true
		}
	}
	return false, true
}

// closeMatches are the concrete channel names within two typos of ch,
// sorted.
func closeMatches(ch string, names []string) []string {
	var concrete []string
	for _, n := range names {
		if wire.IsConcrete(n) {
			concrete = append(concrete, n)
		}
	}
	return typo.Close(ch, concrete, 2, false)
}
