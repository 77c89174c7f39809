package mesh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
)

// ErrBadArguments is returned by CallTool for arguments the tool does not
// take or of the wrong type; the tool did not run.
var ErrBadArguments = errors.New("bad arguments")

// toolSpec lists the arguments a tool takes; every other key is refused.
type toolSpec struct {
	required []string
	optional []string
	run      func(ctx context.Context, e *Endpoint, a toolArgs) (string, error)
}

var tools = map[string]toolSpec{
	"cotal_send":     {required: []string{"text"}, optional: []string{"channel", "mentions"}, run: toolSend},
	"cotal_dm":       {required: []string{"to", "text"}, run: toolDM},
	"cotal_anycast":  {required: []string{"role", "text"}, run: toolAnycast},
	"cotal_inbox":    {optional: []string{"peek"}, run: toolInbox},
	"cotal_roster":   {run: toolRoster},
	"cotal_status":   {optional: []string{"status", "attention", "activity"}, run: toolStatus},
	"cotal_join":     {required: []string{"channel"}, run: toolJoin},
	"cotal_leave":    {required: []string{"channel"}, run: toolLeave},
	"cotal_channels": {run: toolChannels},
}

// ToolNames lists the tools CallTool serves.
func ToolNames() []string {
	out := make([]string, 0, len(tools))
	for n := range tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CallTool runs one agent tool with JSON object arguments and returns its
// text answer. Arguments are closed: any key the tool does not list (an
// owner, an actor, a caller) is refused before anything runs, so a tool
// can never be steered into acting as someone else.
func (e *Endpoint) CallTool(ctx context.Context, name string, args json.RawMessage) (string, error) {
	spec, ok := tools[name]
	if !ok {
		return "", refuse(ErrBadArguments, "unknown tool %q (tools: %s)", name, strings.Join(ToolNames(), ", "))
	}
	a, err := parseToolArgs(name, spec, args)
	if err != nil {
		return "", err
	}
	return spec.run(ctx, e, a)
}

type toolArgs map[string]json.RawMessage

func parseToolArgs(name string, spec toolSpec, raw json.RawMessage) (toolArgs, error) {
	a := toolArgs{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if t[0] != '{' || json.Unmarshal(t, &a) != nil {
			return nil, refuse(ErrBadArguments, "%s: arguments must be a JSON object", name)
		}
	}
	allowed := map[string]bool{}
	for _, k := range append(append([]string{}, spec.required...), spec.optional...) {
		allowed[k] = true
	}
	var unknown []string
	for k := range a {
		if !allowed[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		if len(allowed) == 0 {
			return nil, refuse(ErrBadArguments, "%s takes no arguments (got %s)", name, strings.Join(unknown, ", "))
		}
		accepts := append(append([]string{}, spec.required...), spec.optional...)
		return nil, refuse(ErrBadArguments, "%s: unknown argument(s): %s — this tool accepts only: %s", name, strings.Join(unknown, ", "), strings.Join(accepts, ", "))
	}
	for _, k := range spec.required {
		if _, ok := a[k]; !ok {
			return nil, refuse(ErrBadArguments, "%s: missing argument %q", name, k)
		}
	}
	return a, nil
}

func (a toolArgs) str(name, key string) (string, error) {
	raw, ok := a[key]
	if !ok {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", refuse(ErrBadArguments, "%s: %s must be a string", name, key)
	}
	return s, nil
}

func (a toolArgs) strs(name, key string) ([]string, error) {
	raw, ok := a[key]
	if !ok {
		return nil, nil
	}
	var l []string
	if json.Unmarshal(raw, &l) != nil {
		return nil, refuse(ErrBadArguments, "%s: %s must be a list of strings", name, key)
	}
	return l, nil
}

func (a toolArgs) boolean(name, key string) (bool, error) {
	raw, ok := a[key]
	if !ok {
		return false, nil
	}
	var v bool
	if json.Unmarshal(raw, &v) != nil {
		return false, refuse(ErrBadArguments, "%s: %s must be true or false", name, key)
	}
	return v, nil
}

// strArgs reads several string arguments, stopping at the first bad one.
func (a toolArgs) strArgs(name string, keys ...string) ([]string, error) {
	out := make([]string, len(keys))
	for i, k := range keys {
		v, err := a.str(name, k)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func toolSend(ctx context.Context, e *Endpoint, a toolArgs) (string, error) {
	v, err := a.strArgs("cotal_send", "text", "channel")
	if err != nil {
		return "", err
	}
	mentions, err := a.strs("cotal_send", "mentions")
	if err != nil {
		return "", err
	}
	r, err := e.Send(ctx, v[1], v[0], WithMentions(mentions...))
	if err != nil {
		return "", fmt.Errorf("Couldn't send: %w", err)
	}
	out := "Sent to #" + r.Channel
	if len(r.Mentions) > 0 {
		out += " (mentioned @" + strings.Join(r.Mentions, ", @") + ")"
	}
	return out + ". " + r.String(), nil
}

func toolDM(ctx context.Context, e *Endpoint, a toolArgs) (string, error) {
	v, err := a.strArgs("cotal_dm", "to", "text")
	if err != nil {
		return "", err
	}
	r, err := e.DM(ctx, v[0], v[1])
	if err != nil {
		return "", fmt.Errorf("Couldn't DM: %w", err)
	}
	return "DM sent to " + r.ToName + ". " + r.String(), nil
}

func toolAnycast(ctx context.Context, e *Endpoint, a toolArgs) (string, error) {
	v, err := a.strArgs("cotal_anycast", "role", "text")
	if err != nil {
		return "", err
	}
	r, err := e.Ask(ctx, v[0], v[1])
	if err != nil {
		return "", fmt.Errorf("Couldn't ask: %w", err)
	}
	return "Sent to one @" + r.ToService + ". " + r.String(), nil
}

func toolInbox(ctx context.Context, e *Endpoint, a toolArgs) (string, error) {
	peek, err := a.boolean("cotal_inbox", "peek")
	if err != nil {
		return "", err
	}
	items, err := e.Collect(ctx, 0)
	if err != nil {
		return "", err
	}
	if len(items) == 0 {
		return "Inbox empty, no new messages.", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d new peer message(s):\n", len(items))
	for _, it := range items {
		b.WriteString(render.Item(it.Kind, it.Subject, it.Msg, it.Historical, e.me) + "\n")
	}
	for _, it := range items {
		if peek {
			_ = it.Release()
		} else if err := it.Ack(); err != nil {
			return b.String(), fmt.Errorf("shown but not acked (it will come again): %w", err)
		}
	}
	return b.String(), nil
}

func toolRoster(ctx context.Context, e *Endpoint, _ toolArgs) (string, error) {
	peers, view, err := e.Roster(ctx)
	if err != nil {
		return "", err
	}
	return render.Roster(peers, view, time.Now()), nil
}

func toolStatus(_ context.Context, e *Endpoint, a toolArgs) (string, error) {
	v, err := a.strArgs("cotal_status", "status", "attention", "activity")
	if err != nil {
		return "", err
	}
	if e.writer == nil {
		return "", errors.New("this endpoint writes no presence")
	}
	rec := e.writer.Record()
	status, activity := rec.Status, rec.Activity
	if _, ok := a["activity"]; ok {
		activity = v[2]
	}
	if v[0] != "" {
		if status, err = presence.ParseStatus(v[0]); err != nil {
			return "", refuse(ErrBadArguments, "cotal_status: %v", err)
		}
	}
	if v[1] != "" {
		att, err := presence.ParseAttention(v[1])
		if err != nil {
			return "", refuse(ErrBadArguments, "cotal_status: %v", err)
		}
		if err := e.writer.SetAttention(att); err != nil {
			return "", err
		}
	}
	if v[0] != "" || v[2] != "" || a["activity"] != nil {
		if err := e.writer.Set(status, activity); err != nil {
			return "", err
		}
	}
	rec = e.writer.Record()
	att := rec.Attention
	if att == "" {
		att = presence.Open
	}
	return fmt.Sprintf("Status %s, attention %s, activity %q.", rec.Status, att, rec.Activity), nil
}

func toolJoin(ctx context.Context, e *Endpoint, a toolArgs) (string, error) {
	ch, err := a.str("cotal_join", "channel")
	if err != nil {
		return "", err
	}
	r, err := e.Join(ctx, ch)
	if errors.Is(err, ErrNotInReadACL) {
		return "", fmt.Errorf("Can't join #%s: it's outside your read ACL (allowSubscribe: %s)", ch, describeACL(e.allowSubscribe))
	}
	if err != nil {
		return "", fmt.Errorf("Can't join #%s: %w", ch, err)
	}
	if !r.Joined {
		return "Already on #" + ch + ".", nil
	}
	return JoinSummary(r), nil
}

// JoinSummary is a join result in one honest line: durable only when the
// backstop really holds the channel, and why not otherwise.
func JoinSummary(r JoinResult) string {
	var b strings.Builder
	b.WriteString("Joined #" + r.Channel)
	if r.Durable {
		b.WriteString(" (durable backstop active)")
	} else if r.Reason != "" {
		b.WriteString(" (LIVE only — " + strings.TrimPrefix(r.Reason, "live only: ") + ")")
	} else {
		b.WriteString(" (live)")
	}
	if r.Backfilled > 0 {
		fmt.Fprintf(&b, "; %d earlier post(s) in your inbox as history", r.Backfilled)
	}
	return b.String() + "."
}

func toolLeave(ctx context.Context, e *Endpoint, a toolArgs) (string, error) {
	ch, err := a.str("cotal_leave", "channel")
	if err != nil {
		return "", err
	}
	left, err := e.Leave(ctx, ch)
	if err != nil {
		return "", err
	}
	if !left {
		return "You weren't on #" + ch + ".", nil
	}
	return "Left #" + ch + ".", nil
}

// toolChannels lists the joined channels with each one's delivery class
// and, for a durable one, whether its backstop really holds it now: active
// only while the delivery service answers for an established hold.
func toolChannels(ctx context.Context, e *Endpoint, _ toolArgs) (string, error) {
	type joined struct {
		channel    string
		generation uint64
	}
	e.mu.Lock()
	chs := make([]joined, len(e.joined))
	for i, j := range e.joined {
		chs[i] = joined{j.channel, j.generation}
	}
	e.mu.Unlock()
	if len(chs) == 0 {
		return "Not on any channel.", nil
	}
	var holds map[string]MembershipInfo
	var holdErr error
	lines := make([]string, 0, len(chs))
	for _, j := range chs {
		line := "#" + j.channel + " — "
		var res JoinResult
		eff := e.effective(ctx, j.channel, &res)
		if res.Reason != "" && j.generation > 0 {
			// The class could not be read (an agent reads it through the
			// delivery service, which may be away); the hold says durable.
			eff.Class = ClassDurable
		}
		switch {
		case e.profile == "open":
			line += "live (an open mesh has no durable delivery)"
		case eff.Class != ClassDurable:
			line += "live: only what arrives while you are connected"
		case j.generation == 0:
			line += "durable channel, but your backstop is NOT active: live only (leave and join again to retry)"
		default:
			if holds == nil && holdErr == nil {
				holds = map[string]MembershipInfo{}
				var ms []MembershipInfo
				if ms, holdErr = e.Memberships(ctx); holdErr == nil {
					for _, m := range ms {
						holds[m.Channel] = m
					}
				}
			}
			m, ok := holds[j.channel]
			switch {
			case holdErr != nil:
				line += "durable, backstop DEGRADED: the delivery service does not answer (" + holdErr.Error() + ")"
			case !ok || !m.Activated || m.Generation != j.generation:
				line += "durable, backstop DEGRADED: the delivery service has no active hold for you on record"
			default:
				line += "durable, backstop active: what is posted while you are away is kept for you"
			}
		}
		lines = append(lines, line)
	}
	return fmt.Sprintf("On %d channel(s):\n", len(chs)) + strings.Join(lines, "\n"), nil
}
