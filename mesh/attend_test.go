package mesh

import (
	"testing"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestAttendFollowsTheAttentionTable: spec §12's table, with the
// per-channel overrides winning over the global mode.
func TestAttendFollowsTheAttentionTable(t *testing.T) {
	me := wire.Principal{Owner: "local", Actor: "me"}
	dm := &Item{Kind: wire.KindDM}
	task := &Item{Kind: wire.KindAnycast}
	ambient := &Item{Kind: wire.KindChannel, Msg: wire.Message{Channel: "team"}}
	mention := &Item{Kind: wire.KindChannel, Msg: wire.Message{Channel: "team", Mentions: []string{"me"}}}
	history := &Item{Kind: wire.KindChannel, Historical: true, Msg: wire.Message{Channel: "team"}}
	historyMention := &Item{Kind: wire.KindChannel, Historical: true, Msg: wire.Message{Channel: "team", Mentions: []string{"me"}}}
	open, dnd, focus := presence.Open, presence.DND, presence.Focus
	for _, tc := range []struct {
		name   string
		it     *Item
		global presence.Attention
		mode   ChannelMode
		idle   bool
		want   Action
	}{
		{"dm, open", dm, open, "", false, Inject},
		{"dm, dnd", dm, dnd, "", false, Inject},
		{"dm, focus", dm, focus, "", false, Inject},
		{"dm on a muted channel's sender", dm, open, ModeMuted, false, Inject},
		{"task, focus", task, focus, "", false, Inject},
		{"mention, open", mention, open, "", false, Inject},
		{"mention, dnd", mention, dnd, "", false, Inject},
		{"mention, focus, idle", mention, focus, "", true, Inject},
		{"mention, focus, working", mention, focus, "", false, Inject},
		{"ambient, open, idle", ambient, open, "", true, Inject},
		{"ambient, open, working", ambient, open, "", false, Hold},
		{"ambient, dnd, idle", ambient, dnd, "", true, Hold},
		{"ambient, focus", ambient, focus, "", true, Pull},
		{"ambient, quiet channel", ambient, open, ModeQuiet, true, Pull},
		{"mention, quiet channel", mention, open, ModeQuiet, false, Inject},
		{"ambient, muted channel", ambient, open, ModeMuted, true, Drop},
		{"mention, muted channel", mention, open, ModeMuted, true, Drop},
		{"history, open, idle", history, open, "", true, Pull},
		{"history mention, open", historyMention, open, "", false, Inject},
		{"normal override is none", ambient, open, ModeNormal, true, Inject},
		{"held back before, open now", &Item{Kind: wire.KindChannel, PullOnly: true, Msg: wire.Message{Channel: "team", Mentions: []string{"me"}}}, open, "", true, Pull},
		{"a dm is never held back", &Item{Kind: wire.KindDM, PullOnly: true}, focus, "", false, Inject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Attend(tc.it, me, tc.global, tc.mode, tc.idle); got != tc.want {
				t.Fatalf("Attend = %s, want %s", got, tc.want)
			}
		})
	}
}
