package mcp_test

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

var wantTools = []string{
	"cotal_anycast", "cotal_channel_info", "cotal_channel_mode", "cotal_channels", "cotal_connection_status",
	"cotal_despawn", "cotal_dm", "cotal_docs", "cotal_inbox", "cotal_join", "cotal_leave", "cotal_orientation",
	"cotal_personas", "cotal_roster", "cotal_send", "cotal_spawn", "cotal_status",
}

// Every tool is listed with a closed object schema whose properties are
// exactly the arguments the tool accepts.
func TestToolsListHasClosedSchemas(t *testing.T) {
	h := startMesh(t)
	c := standalone(t, h, h.mint("alice", "", []string{"team"}, []string{"team"}))
	res, err := c.cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantArgs := map[string][]string{
		"cotal_send": {"channel", "mentions", "text"}, "cotal_dm": {"text", "to"}, "cotal_anycast": {"role", "text"},
		"cotal_inbox": {"peek"}, "cotal_status": {"activity", "attention", "status"}, "cotal_channel_info": {"channel"},
		"cotal_channel_mode": {"channel", "mode"}, "cotal_join": {"channel"}, "cotal_leave": {"channel"},
		"cotal_spawn": {"cwd", "name", "prompt", "role"}, "cotal_despawn": {"graceful", "name"}, "cotal_personas": {"name"},
		"cotal_docs": {"page", "query"},
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		s, ok := tl.InputSchema.(map[string]any)
		if !ok || s["type"] != "object" || s["additionalProperties"] != false {
			t.Errorf("%s: input schema %v is not a closed object", tl.Name, tl.InputSchema)
			continue
		}
		props, _ := s["properties"].(map[string]any)
		var got []string
		for k := range props {
			got = append(got, k)
		}
		sort.Strings(got)
		if want := wantArgs[tl.Name]; !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
			t.Errorf("%s: properties %v, want %v", tl.Name, got, want)
		}
		if tl.Description == "" {
			t.Errorf("%s has no description", tl.Name)
		}
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, wantTools) {
		t.Errorf("tools/list: %v\nwant %v", names, wantTools)
	}
	if !reflect.DeepEqual(mcp.ToolNames(), wantTools) {
		t.Errorf("ToolNames: %v", mcp.ToolNames())
	}
}

// An argument a tool does not list is refused with the spec's text before
// anything runs (conformance 63): neither the DM naming an owner nor the
// post naming a caller reaches anyone.
func TestUnknownArgumentsAreRefusedBeforeRunning(t *testing.T) {
	h := startMesh(t)
	bob := h.peer(h.mint("bob", "", []string{"team"}, []string{"team"}))
	c := standalone(t, h, h.mint("alice", "", []string{"team"}, []string{"team"}))
	cases := []struct {
		tool string
		args any
		want string
	}{
		{"cotal_dm", map[string]any{"to": "bob", "text": "forged", "owner": "u_x"}, "cotal_dm: unknown argument(s): owner — this tool accepts only: to, text"},
		{"cotal_send", map[string]any{"text": "leaked", "channel": "team", "caller": "a", "actor": "b"}, "cotal_send: unknown argument(s): actor, caller — this tool accepts only: text, channel, mentions"},
		{"cotal_roster", map[string]any{"owner": "u_x"}, "cotal_roster takes no arguments (got owner)"},
		{"cotal_orientation", map[string]any{"x": 1}, "cotal_orientation takes no arguments (got x)"},
		{"cotal_send", []string{"leaked"}, "cotal_send: arguments must be a JSON object"},
		{"cotal_status", map[string]any{"status": "offline"}, "cotal_status: invalid arguments:"},
		{"cotal_dm", map[string]any{"text": "no recipient"}, "cotal_dm: invalid arguments:"},
		{"cotal_channel_mode", map[string]any{"channel": "team", "mode": "loud"}, "cotal_channel_mode: invalid arguments:"},
	}
	for _, tc := range cases {
		res, err := c.cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s: protocol error: %v", tc.tool, err)
		}
		got := ""
		if len(res.Content) > 0 {
			got = res.Content[0].(*sdk.TextContent).Text
		}
		if !res.IsError || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s %v:\n got %v %q\nwant a refusal %q", tc.tool, tc.args, res.IsError, got, tc.want)
		}
	}
	// Nothing refused ran: what bob gets are the two good calls made after.
	c.ok("cotal_dm", map[string]any{"to": "bob", "text": "real"})
	c.ok("cotal_send", map[string]any{"text": "marker", "channel": "team"})
	seen := map[string]bool{}
	for !seen["real"] || !seen["marker"] {
		it := next(t, bob)
		if txt := it.Msg.Text(); txt != "real" && txt != "marker" {
			t.Fatalf("bob got %s %q: a refused call ran", it.Kind, txt)
		}
		seen[it.Msg.Text()] = true
	}
}

// The standalone server acts as its agent on a real mesh: what it sends
// arrives at other identities as the agent, and what they send it comes
// out of cotal_inbox once.
func TestStandaloneToolsOnARealMesh(t *testing.T) {
	h := startMesh(t)
	aliceCreds := h.mint("alice", "dev", []string{"team"}, []string{"team"})
	bob := h.peer(h.mint("bob", "reviewer", []string{"team"}, []string{"team"}))
	c := standalone(t, h, aliceCreds)

	text := c.waitOK("cotal_orientation", nil, "You are alice (id local.alice, role dev)")
	for _, want := range []string{"Joined: #team", "cotal_send without a channel posts to #team", "May post (allowPublish): #team", "bob"} {
		if !strings.Contains(text, want) {
			t.Errorf("orientation has no %q:\n%s", want, text)
		}
	}
	// The roster is a view of presence records: alice's own may reach it a
	// moment after bob's, so wait for both.
	c.waitText("cotal_roster", nil, func(text string) error {
		if !strings.Contains(text, "bob/reviewer") || !strings.Contains(text, "alice/dev (you)") {
			return fmt.Errorf("roster without bob/reviewer and alice/dev (you):\n%s", text)
		}
		return nil
	})

	// cotal_dm reaches bob, from alice.
	if got := c.ok("cotal_dm", map[string]any{"to": "bob", "text": "hi bob"}); !strings.HasPrefix(got, "DM sent to bob. stored seq ") {
		t.Errorf("cotal_dm: %q", got)
	}
	it := next(t, bob)
	if it.Kind != wire.KindDM || it.Msg.From.ID != "local.alice" || it.Msg.Text() != "hi bob" {
		t.Fatalf("bob got %s %q from %s, want alice's DM", it.Kind, it.Msg.Text(), it.Msg.From.ID)
	}
	// cotal_send without a channel posts to #team.
	if got := c.ok("cotal_send", map[string]any{"text": "hello team", "mentions": []string{"bob"}}); !strings.HasPrefix(got, "Sent to #team (mentioned @bob). stored seq ") {
		t.Errorf("cotal_send: %q", got)
	}
	it = next(t, bob)
	if it.Kind != wire.KindChannel || it.Subject.Channel != "team" || it.Msg.Text() != "hello team" {
		t.Fatalf("bob got %s %q, want the post on #team", it.Kind, it.Msg.Text())
	}
	if got := c.refused("cotal_send", map[string]any{"text": "x", "mentions": []string{"nobody"}}); !strings.Contains(got, `Couldn't send: unknown mention(s): @nobody — no such peer observed in space "mcptest"`) {
		t.Errorf("unknown mention: %q", got)
	}
	if got := c.refused("cotal_send", map[string]any{"text": "x", "channel": "ops"}); !strings.HasPrefix(got, "Couldn't send: not allowed to post to #ops") {
		t.Errorf("post outside allowPublish: %q", got)
	}
	if got := c.refused("cotal_dm", map[string]any{"to": "nobody", "text": "x"}); !strings.HasPrefix(got, `Couldn't DM: no peer "nobody" in space "mcptest"`) {
		t.Errorf("DM to nobody: %q", got)
	}
	// cotal_anycast reaches the one reviewer.
	if got := c.ok("cotal_anycast", map[string]any{"role": "reviewer", "text": "review #42"}); !strings.HasPrefix(got, "Sent to one @reviewer. stored seq ") {
		t.Errorf("cotal_anycast: %q", got)
	}
	if it := next(t, bob); it.Kind != wire.KindAnycast || it.Msg.Text() != "review #42" {
		t.Fatalf("bob got %s %q, want the task", it.Kind, it.Msg.Text())
	}

	// A DM to alice comes out of cotal_inbox: peek keeps it, a read
	// clears it, and the next read does not return it again.
	if _, err := bob.DM(ctxT(t), "alice", "hi alice"); err != nil {
		t.Fatal(err)
	}
	peek := c.waitOK("cotal_inbox", map[string]any{"peek": true}, "[DM from bob/reviewer] hi alice")
	if !strings.Contains(peek, "peek: nothing was cleared") {
		t.Errorf("peek: %q", peek)
	}
	if got := c.ok("cotal_inbox", nil); !strings.Contains(got, "[DM from bob/reviewer] hi alice") {
		t.Fatalf("the read after a peek lost the DM:\n%s", got)
	}
	if got := c.ok("cotal_inbox", nil); got != "Inbox empty, no new messages." {
		t.Errorf("second read: %q", got)
	}

	// Status and attention reach the roster others see.
	got := c.ok("cotal_status", map[string]any{"status": "working", "activity": "reviewing #42", "attention": "focus"})
	if want := `Status working, attention focus (DMs, tasks and @mentions of you reach you; channel posts wait in cotal_inbox), activity "reviewing #42".`; got != want {
		t.Errorf("cotal_status:\n got %q\nwant %q", got, want)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		peers, _, err := bob.Roster(ctxT(t))
		if err != nil {
			return err
		}
		for _, p := range peers {
			if p.Name == "alice" && p.Status == presence.Working && p.Record.Activity == "reviewing #42" && p.Record.Attention == presence.Focus {
				return nil
			}
		}
		return fmt.Errorf("bob's roster does not show alice working on reviewing #42 in focus: %+v", peers)
	})
	if got := c.ok("cotal_status", nil); !strings.HasPrefix(got, "Status working, attention focus") {
		t.Errorf("cotal_status with no arguments: %q", got)
	}
}

// Joining, leaving and channel modes, and what cotal_channels and
// cotal_channel_info say of them.
func TestChannelsJoinLeaveAndModes(t *testing.T) {
	h := startMesh(t)
	aliceCreds := h.mint("alice", "", []string{"team"}, []string{"team", "ops"})
	bob := h.peer(h.mint("bob", "", []string{"team"}, []string{"team"}))
	c := standalone(t, h, aliceCreds)
	c.waitOK("cotal_orientation", nil, "You are alice")

	if got := c.refused("cotal_join", map[string]any{"channel": "ops"}); got != "Can't join #ops: it's outside your read ACL (allowSubscribe: #team)" {
		t.Errorf("join outside the read ACL: %q", got)
	}
	if got := c.ok("cotal_join", map[string]any{"channel": "team"}); got != "Already on #team." {
		t.Errorf("join #team again: %q", got)
	}
	if got := c.ok("cotal_channels", nil); !strings.Contains(got, "* #team — durable, backstop active; replay on") {
		t.Errorf("cotal_channels:\n%s", got)
	}
	if got := c.ok("cotal_channel_info", map[string]any{"channel": "team"}); !strings.Contains(got, "#team is not in the channel registry") || !strings.Contains(got, "You are on #team.") {
		t.Errorf("cotal_channel_info:\n%s", got)
	}

	// quiet is reported; muted drops the channel's posts from the inbox.
	if got := c.ok("cotal_channel_mode", map[string]any{"channel": "team", "mode": "quiet"}); !strings.HasPrefix(got, "#team is now quiet") {
		t.Errorf("quiet: %q", got)
	}
	if got := c.ok("cotal_channels", nil); !strings.Contains(got, "* #team — durable, backstop active; replay on; mode quiet") {
		t.Errorf("cotal_channels after quiet:\n%s", got)
	}
	if got := c.refused("cotal_channel_mode", map[string]any{"channel": "ops", "mode": "muted"}); got != "Couldn't set #ops to muted: it's outside your read ACL (allowSubscribe: #team)" {
		t.Errorf("mode outside the ACL: %q", got)
	}
	if got := c.refused("cotal_channel_mode", map[string]any{"channel": "team.*", "mode": "muted"}); !strings.HasPrefix(got, "Couldn't set #team.* to muted: modes apply to one concrete channel") {
		t.Errorf("mode on a pattern: %q", got)
	}
	c.ok("cotal_channel_mode", map[string]any{"channel": "team", "mode": "muted"})
	if _, err := bob.Send(ctxT(t), "team", "noise"); err != nil {
		t.Fatal(err)
	}
	c.waitOK("cotal_inbox", nil, "1 post(s) on muted channels dropped.")
	c.ok("cotal_channel_mode", map[string]any{"channel": "team", "mode": "normal"})
	if _, err := bob.Send(ctxT(t), "team", "signal"); err != nil {
		t.Fatal(err)
	}
	c.waitOK("cotal_inbox", nil, "[#team bob] signal")

	if got := c.ok("cotal_leave", map[string]any{"channel": "team"}); got != "Left #team." {
		t.Errorf("leave: %q", got)
	}
	if got := c.ok("cotal_leave", map[string]any{"channel": "team"}); got != "You weren't on #team." {
		t.Errorf("leave again: %q", got)
	}
	if got := c.refused("cotal_send", map[string]any{"text": "x"}); !strings.HasPrefix(got, "Couldn't send: no channel given and you have joined none") {
		t.Errorf("send with no channel joined: %q", got)
	}
	if got := c.ok("cotal_join", map[string]any{"channel": "team"}); !strings.HasPrefix(got, "Joined #team (durable backstop active)") {
		t.Errorf("join #team: %q", got)
	}
}

// cotal_channels says a durable channel's backstop is active only while
// the delivery service answers for the hold, and DEGRADED when it does not.
func TestChannelsToolSaysWhetherTheBackstopHolds(t *testing.T) {
	h := startMesh(t)
	h.setClass("team", mesh.ClassDurable)
	c := standalone(t, h, h.mint("alice", "", []string{"team"}, []string{"team"}))
	c.waitOK("cotal_channels", nil, "* #team — durable, backstop active")
	h.m.Delivery().Close()
	c.waitOK("cotal_channels", nil, "* #team — durable, backstop DEGRADED")
}
