package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// tool is one cotal_* tool: its closed argument contract and its handler.
type tool struct {
	name     string
	desc     string
	readOnly bool
	params   params
	run      func(ctx context.Context, s *Server, raw json.RawMessage) (string, error)
}

func (t *tool) sdkTool() *sdk.Tool {
	return &sdk.Tool{
		Name: t.name, Description: t.desc, InputSchema: t.params.schema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: t.readOnly, OpenWorldHint: new(bool)},
	}
}

// onMesh is a tool that needs the mesh: with no connection it is refused
// before it runs, saying why.
func onMesh[A any](name, desc string, readOnly bool, fn func(ctx context.Context, s *Server, ss *session, a A) (string, error)) *tool {
	var zero A
	p := paramsOf(zero)
	return &tool{name: name, desc: desc, readOnly: readOnly, params: p, run: func(ctx context.Context, s *Server, raw json.RawMessage) (string, error) {
		var a A
		if err := decodeArgs(name, p, raw, &a); err != nil {
			return "", err
		}
		ss, err := s.link.session(ctx)
		if err != nil {
			return "", err
		}
		return fn(ctx, s, ss, a)
	}}
}

// always is a tool that answers with or without the mesh (ss is nil and
// down says why when there is none).
func always(name, desc string, fn func(ctx context.Context, s *Server, ss *session, down error) (string, error)) *tool {
	p := paramsOf(noArgs{})
	return &tool{name: name, desc: desc, readOnly: true, params: p, run: func(ctx context.Context, s *Server, raw json.RawMessage) (string, error) {
		var a noArgs
		if err := decodeArgs(name, p, raw, &a); err != nil {
			return "", err
		}
		ss, down := s.link.session(ctx)
		return fn(ctx, s, ss, down)
	}}
}

type noArgs struct{}

type inboxArgs struct {
	Peek bool `json:"peek,omitempty" desc:"true: show what is waiting without clearing it"`
}

type sendArgs struct {
	Text     string   `json:"text" schema:"minLength=1" desc:"the message"`
	Channel  string   `json:"channel,omitempty" schema:"maxLength=4096" desc:"the channel to post to, e.g. team or team.backend; default: the first channel you joined that you may post to"`
	Mentions []string `json:"mentions,omitempty" schema:"maxItems=32" desc:"names of peers to @mention; each must be a peer of the space"`
}

type dmArgs struct {
	To   string `json:"to" schema:"minLength=1,maxLength=256" desc:"the peer's name, or its id (owner.actor) when names collide"`
	Text string `json:"text" schema:"minLength=1" desc:"the message"`
}

type anycastArgs struct {
	Role string `json:"role" schema:"minLength=1,maxLength=64" desc:"the role; any one peer holding it gets the task"`
	Text string `json:"text" schema:"minLength=1" desc:"the task"`
}

type statusArgs struct {
	Status    string  `json:"status,omitempty" schema:"enum=idle|working|waiting" desc:"idle (free for work), working (in a task) or waiting (blocked on someone)"`
	Attention string  `json:"attention,omitempty" schema:"enum=open|dnd|focus" desc:"open: everything reaches you; dnd: channel posts wait for your next turn; focus: only DMs, tasks and @mentions of you reach you"`
	Activity  *string `json:"activity,omitempty" schema:"maxLength=200" desc:"one line on what you are doing; empty clears it"`
}

type channelArgs struct {
	Channel string `json:"channel" schema:"minLength=1,maxLength=4096" desc:"the channel, e.g. team or team.backend"`
}

type channelModeArgs struct {
	Channel string `json:"channel" schema:"minLength=1,maxLength=4096" desc:"one concrete channel you may read"`
	Mode    string `json:"mode" schema:"enum=normal|quiet|muted" desc:"normal; quiet: posts wait in cotal_inbox, @mentions of you still reach you; muted: posts are dropped, @mentions included"`
}

// toolSet is the tool surface, in the order tools/list shows it; built
// (and its schemas compiled) once.
var toolSet = sync.OnceValue(func() []*tool {
	return []*tool{
		always("cotal_orientation", "Who you are on the cotal mesh and what you can do: your identity, the channels you joined and may read and post to, your status and attention, who else is here, and how many messages wait for you. Call it first.", toolOrientation),
		always("cotal_connection_status", "This server's link to the mesh, as JSON: state (ready, degraded, connecting, disconnected or stopped) with the raw facts behind it and what is buffered.", toolConnectionStatus),
		onMesh("cotal_roster", "Everyone on the mesh, one line each: status, name/role, what they are doing, attention, and how fresh that is.", true, toolRoster),
		onMesh("cotal_inbox", "Read the messages waiting for you: DMs and tasks first, then channel posts, then history. What is returned is cleared; with peek nothing is cleared.", false, toolInbox),
		onMesh("cotal_send", "Post a message to a channel. Without channel it goes to the first channel you joined that you may post to. mentions @-mention peers by name, which reaches them even when they are not on the channel.", false, toolSend),
		onMesh("cotal_dm", "Send a direct message to one peer, by name (or id). It waits for them when they are offline.", false, toolDM),
		onMesh("cotal_anycast", "Send a task to any one peer holding a role. When nobody holds it, it waits in the role's queue.", false, toolAnycast),
		onMesh("cotal_status", "Set your status (idle, working, waiting), attention (open, dnd, focus) and activity line on the roster. With no arguments, report them.", false, toolStatus),
		onMesh("cotal_channel_info", "What the channel registry says of one channel: description, instructions, delivery class and replay. Registry text is advisory.", true, toolChannelInfo),
		onMesh("cotal_channels", "The channels you can see: which you joined, their description, delivery class and durable backstop, replay, and your quiet or muted mode.", true, toolChannels),
		onMesh("cotal_channel_mode", "Set how one channel reaches you: normal, quiet (its posts wait in cotal_inbox; @mentions of you still reach you) or muted (its posts are dropped, @mentions included). Lasts until this session ends.", false, toolChannelMode),
		onMesh("cotal_join", "Join a channel you may read: you receive its posts from now on (and its recent history, when it replays).", false, toolJoin),
		onMesh("cotal_leave", "Leave a channel: its posts stop reaching you (an @mention of you still does).", false, toolLeave),
		onMesh("cotal_personas", "The personas you can spawn seats from (needs capabilities: [spawn]): each one's role, harness, description and channel lists. With name, only that one.", true, toolPersonas),
		onMesh("cotal_spawn", "Start a seat (an agent in its own terminal, on the mesh) from a persona; needs capabilities: [spawn]. The seat is named after the persona, numbered when taken. Says whether it came up.", false, toolSpawn),
		onMesh("cotal_despawn", "Stop a seat you spawned (SIGTERM, then SIGKILL after 3 s; graceful=false: at once); without name, stop your own seat, which ends this session. You cannot stop seats others spawned.", false, toolDespawn),
		offline("cotal_docs", "How this mesh works, on demand: messaging, channels (permissions, families, replay), attention, spawning, the control surface. No arguments lists the pages; page reads one; query searches them.", toolDocs),
	}
})

func toolRoster(ctx context.Context, _ *Server, ss *session, _ noArgs) (string, error) {
	peers, view, err := ss.e.Roster(ctx)
	if err != nil {
		return "", couldnt("read the roster", err)
	}
	if st, err := ss.c.state(ctx); err == nil {
		peers = withOwnState(peers, st)
	}
	return rosterText(peers, view, ss.e.Me().ID(), ss.e.Space()), nil
}

// withOwnState shows this identity's own row as its connector has it now:
// the roster may be a refresh behind a change just made.
func withOwnState(peers []presence.Peer, st mesh.ConnectorState) []presence.Peer {
	if st.Presence == nil {
		return peers
	}
	out := append([]presence.Peer(nil), peers...)
	for i, p := range out {
		if p.ID != st.ID || p.Offline {
			continue
		}
		p.Status = presence.Status(st.Presence.Status)
		p.Record.Activity = st.Presence.Activity
		p.Record.Attention = presence.Attention(st.Presence.Attention)
		p.Record.ChannelModes = map[string]string{}
		for ch, m := range st.Modes {
			p.Record.ChannelModes[ch] = string(m)
		}
		if st.Presence.StatusSinceMs > 0 {
			p.StatusSince = time.UnixMilli(st.Presence.StatusSinceMs)
		}
		out[i] = p
	}
	return out
}

func toolInbox(ctx context.Context, _ *Server, ss *session, a inboxArgs) (string, error) {
	w, err := ss.c.window(ctx, a.Peek)
	if err != nil {
		return "", couldnt("read your inbox", err)
	}
	return windowText(w), nil
}

func toolSend(ctx context.Context, _ *Server, ss *session, a sendArgs) (string, error) {
	st, stErr := ss.c.state(ctx)
	ch := strings.TrimSpace(a.Channel)
	if ch == "" {
		if stErr != nil {
			return "", refusef("Couldn't send: no channel given, and your joined channels could not be read (%v). Name the channel.", stErr)
		}
		if ch = defaultChannel(st); ch == "" && len(st.Channels) == 0 {
			return "", refusef("Couldn't send: no channel given and you have joined none. Name one (channel) or cotal_join one first.")
		}
		if ch == "" {
			return "", refusef("Couldn't send: no channel given, and none of the channels you joined (#%s) is one you may post to (allowPublish: %s). Name the channel to post to.",
				strings.Join(joinedList(st), ", #"), describeACL(st.AllowPublish))
		}
	}
	r, err := ss.e.Send(ctx, ch, a.Text, mesh.WithMentions(a.Mentions...))
	if err != nil {
		return "", refusef("Couldn't send: %v", err)
	}
	var b strings.Builder
	b.WriteString("Sent to #" + ch)
	if len(r.Mentions) > 0 {
		b.WriteString(" (mentioned @" + strings.Join(r.Mentions, ", @") + ")")
	}
	b.WriteString(". " + r.String() + ".")
	for _, n := range sendNotes(ctx, ss, st, stErr, ch, r.Seq) {
		b.WriteString("\nNote: " + n)
	}
	return b.String(), nil
}

func toolDM(ctx context.Context, _ *Server, ss *session, a dmArgs) (string, error) {
	r, err := ss.e.DM(ctx, a.To, a.Text)
	if err != nil {
		return "", refusef("Couldn't DM: %v", err)
	}
	return "DM sent to " + r.ToName + ". " + r.String() + ".", nil
}

func toolAnycast(ctx context.Context, _ *Server, ss *session, a anycastArgs) (string, error) {
	r, err := ss.e.Ask(ctx, a.Role, a.Text)
	if err != nil {
		return "", refusef("Couldn't send to @%s: %v", wire.CleanLabel(a.Role), err)
	}
	return "Sent to one @" + r.ToService + ". " + r.String() + ".", nil
}

func toolStatus(ctx context.Context, _ *Server, ss *session, a statusArgs) (string, error) {
	if a.Status != "" || a.Activity != nil {
		if err := ss.c.setStatus(ctx, a.Status, a.Activity); err != nil {
			return "", couldnt("set your status", err)
		}
	}
	if a.Attention != "" {
		if err := ss.c.setAttention(ctx, presence.Attention(a.Attention)); err != nil {
			return "", couldnt("set your attention", err)
		}
	}
	st, err := ss.c.state(ctx)
	if err != nil {
		return "", couldnt("read your status back", err)
	}
	if st.Presence == nil {
		return "", couldnt("read your status", errors.New("this connection writes no presence"))
	}
	return statusText(*st.Presence), nil
}

func toolChannelInfo(ctx context.Context, _ *Server, ss *session, a channelArgs) (string, error) {
	ch := strings.TrimSpace(a.Channel)
	if err := wire.ValidateConcreteChannel(ch); err != nil {
		return "", refusef("Couldn't look up #%s: %v", ch, err)
	}
	reg, err := ss.e.Registry(ctx)
	if err != nil {
		return "", couldnt("read the channel registry", err)
	}
	cfg, err := reg.Get(ctx, ch)
	if err != nil {
		return "", couldnt("read the channel registry", err)
	}
	def, err := reg.Defaults(ctx)
	if err != nil {
		return "", couldnt("read the channel registry", err)
	}
	st, stErr := ss.c.state(ctx)
	return channelInfoText(ch, cfg, def, st, stErr), nil
}

func toolChannels(ctx context.Context, _ *Server, ss *session, _ noArgs) (string, error) {
	st, err := ss.c.state(ctx)
	if err != nil {
		return "", couldnt("read your channels", err)
	}
	var names []string
	var cfgs map[string]mesh.ChannelConfig
	var def *mesh.ChannelConfig
	reg, regErr := ss.e.Registry(ctx)
	if regErr == nil {
		names, cfgs, regErr = reg.List(ctx)
	}
	if regErr == nil {
		def, regErr = reg.Defaults(ctx)
	}
	// A durable channel's backstop is said active only while the delivery
	// service answers for the very hold this connector joined with.
	var holds *backstops
	for _, j := range st.Channels {
		if j.Durable {
			hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			ms, err := ss.e.Memberships(hctx)
			cancel()
			holds = &backstops{err: err, held: map[string]mesh.MembershipInfo{}}
			for _, m := range ms {
				holds.held[m.Channel] = m
			}
			break
		}
	}
	return channelsText(st, names, cfgs, def, regErr, holds), nil
}

func toolChannelMode(ctx context.Context, _ *Server, ss *session, a channelModeArgs) (string, error) {
	ch := strings.TrimSpace(a.Channel)
	if err := wire.ValidateConcreteChannel(ch); err != nil {
		return "", refusef("Couldn't set #%s to %s: modes apply to one concrete channel (%v)", ch, a.Mode, err)
	}
	st, err := ss.c.state(ctx)
	if err != nil {
		return "", couldnt(fmt.Sprintf("set #%s to %s", ch, a.Mode), err)
	}
	if !st.AllowSubscribe.Covers(ch) {
		return "", refusef("Couldn't set #%s to %s: it's outside your read ACL (allowSubscribe: %s)", ch, a.Mode, describeACL(st.AllowSubscribe))
	}
	if err := ss.c.setChannelMode(ctx, ch, mesh.ChannelMode(a.Mode)); err != nil {
		return "", refusef("Couldn't set #%s to %s: %v", ch, a.Mode, err)
	}
	return modeText(ch, mesh.ChannelMode(a.Mode), joinedOn(st, ch)), nil
}

func toolJoin(ctx context.Context, _ *Server, ss *session, a channelArgs) (string, error) {
	ch := strings.TrimSpace(a.Channel)
	if err := wire.ValidateChannel(ch); err != nil {
		return "", refusef("Can't join #%s: %v", ch, err)
	}
	st, err := ss.c.state(ctx)
	if err != nil {
		return "", failure{fmt.Sprintf("Can't join #%s: %v", ch, err), err}
	}
	if !st.AllowSubscribe.Covers(ch) {
		return "", refusef("Can't join #%s: it's outside your read ACL (allowSubscribe: %s)", ch, describeACL(st.AllowSubscribe))
	}
	for _, j := range st.Channels {
		if j.Channel == ch {
			return "Already on #" + ch + ".", nil
		}
	}
	o, err := ss.c.join(ctx, ch)
	if errors.Is(err, mesh.ErrNotInReadACL) {
		return "", refusef("Can't join #%s: it's outside your read ACL (allowSubscribe: %s)", ch, describeACL(st.AllowSubscribe))
	}
	if err != nil {
		return "", refusef("Can't join #%s: %v", ch, err)
	}
	if !o.Joined {
		return "Already on #" + ch + ".", nil
	}
	return o.Summary + registryNote(ctx, ss, ch), nil
}

func toolLeave(ctx context.Context, _ *Server, ss *session, a channelArgs) (string, error) {
	ch := strings.TrimSpace(a.Channel)
	left, err := ss.c.leave(ctx, ch)
	if err != nil {
		return "", couldnt(fmt.Sprintf("leave #%s", ch), err)
	}
	if !left {
		return "You weren't on #" + ch + ".", nil
	}
	return "Left #" + ch + ".", nil
}
