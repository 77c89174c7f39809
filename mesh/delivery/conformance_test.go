package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Items 27-46 of the conformance checklist of spec/messaging.md §16, and
// the family rules, against a real broker and delivery service.

func TestConformance27_JoinOutsideReadACLLeavesNothing(t *testing.T) {
	h := newHarness(t, false)
	path, _ := h.mint(agent{name: "alice", allowSub: []string{"team"}})
	a := h.connect(path, mesh.Options{OneShot: true})
	if _, err := a.Join(ctxT(t), "secret"); !errors.Is(err, mesh.ErrNotInReadACL) {
		t.Fatalf("join outside the ACL: %v", err)
	}
	if ch := a.Channels(); len(ch) != 0 {
		t.Fatalf("joined %v after a refused join", ch)
	}
	ms, err := a.Memberships(ctxT(t))
	if err != nil || len(ms) != 0 {
		t.Fatalf("memberships after a refused join: %v %v", ms, err)
	}
}

func TestConformance29_LateJoinerGetsHistoryOnce(t *testing.T) {
	h := newHarness(t, false)
	h.setClass("team", mesh.ClassLive)
	p := h.poster("poster")
	post(t, p, "team", "one")
	post(t, p, "team", "two")
	path, _ := h.mint(agent{name: "late", subscribe: []string{"team"}})
	late := h.connect(path, mesh.Options{})
	post(t, p, "team", "three")
	got := collect(t, late, 3*time.Second)
	testutil.WaitFor(t, 5*time.Second, func() error {
		got = append(got, collect(t, late, 0)...)
		if len(got) < 3 {
			return fmt.Errorf("got %v", texts(got))
		}
		return nil
	})
	if want := []string{"(h)one", "(h)two", "three"}; !equal(texts(got), want) {
		t.Fatalf("late joiner got %v, want %v", texts(got), want)
	}
}

func TestConformance30_ReplayOffStillReadableOnDemand(t *testing.T) {
	h := newHarness(t, false)
	off := false
	if _, err := h.reg.Set(ctxT(t), "quiet", mesh.ChannelConfig{Replay: &off, DeliveryClass: mesh.ClassLive}); err != nil {
		t.Fatal(err)
	}
	p := h.poster("poster")
	h.mint(agent{name: "x"}) // unused: keeps the poster's allowPublish list
	if _, err := p.Send(ctxT(t), "team", "warm-up"); err != nil {
		t.Fatal(err)
	}
	path, _ := h.mint(agent{name: "reader", allowSub: []string{"quiet"}, allowPub: []string{"quiet"}})
	w := h.connect(path, mesh.Options{OneShot: true})
	if _, err := w.Send(ctxT(t), "quiet", "old news"); err != nil {
		t.Fatal(err)
	}
	path2, _ := h.mint(agent{name: "joiner", allowSub: []string{"quiet"}})
	j := h.connect(path2, mesh.Options{OneShot: true})
	r, err := j.Join(ctxT(t), "quiet")
	if err != nil || r.Backfilled != 0 {
		t.Fatalf("join with replay off: %+v %v", r, err)
	}
	items, _, err := j.History(ctxT(t), "quiet", 10)
	if err != nil || len(items) != 1 || items[0].Msg.Text() != "old news" {
		t.Fatalf("history on demand: %v %v", items, err)
	}
}

func TestConformance31_OneResolutionOfTheClass(t *testing.T) {
	h := newHarness(t, false)
	if _, err := h.reg.Set(ctxT(t), "", mesh.ChannelConfig{DeliveryClass: mesh.ClassLive}); err != nil {
		t.Fatal(err)
	}
	h.setClass("kept", mesh.ClassDurable)
	path, _ := h.mint(agent{name: "m", subscribe: []string{"kept", "gone"}})
	m := h.connect(path, mesh.Options{OneShot: true})
	ms, err := m.Memberships(ctxT(t))
	if err != nil || len(ms) != 1 || ms[0].Channel != "kept" {
		t.Fatalf("memberships under defaults live, kept durable: %+v %v", ms, err)
	}
}

// member joins channel durably, then goes away; back() reconnects it.
func durableMember(t *testing.T, h *harness, name string, channels ...string) (back func() *mesh.Endpoint, close func()) {
	t.Helper()
	path, _ := h.mint(agent{name: name, subscribe: channels})
	e := h.connect(path, mesh.Options{})
	for _, ch := range channels {
		if !strings.Contains(ch, "*") {
			ms, err := e.Memberships(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, m := range ms {
				found = found || (m.Channel == ch && m.Activated)
			}
			if !found {
				t.Fatalf("%s holds no active durable membership of %s: %+v", name, ch, ms)
			}
		}
	}
	return func() *mesh.Endpoint { return h.connect(path, mesh.Options{OneShot: true}) }, func() { _ = e.Close() }
}

func TestConformance32_LivePostNotStoredForAbsentMember(t *testing.T) {
	h := newHarness(t, false)
	h.setClass("live", mesh.ClassLive)
	h.setClass("team", mesh.ClassDurable)
	path, _ := h.mint(agent{name: "m", subscribe: []string{"live", "team"}})
	m := h.connect(path, mesh.Options{})
	_ = m.Close()
	p := h.poster("poster")
	post(t, p, "live", "missed")
	post(t, p, "team", "marker")
	h.settled()
	back := h.connect(path, mesh.Options{OneShot: true})
	var stored []*mesh.Item
	for _, it := range collect(t, back, 2*time.Second) {
		if it.Durable {
			stored = append(stored, it)
		}
	}
	if got := texts(stored); !equal(got, []string{"marker"}) {
		t.Fatalf("returning member got stored copies %v; the live post must not be stored", got)
	}
}

func TestConformance33_DurablePostWhileOfflineArrivesOnce(t *testing.T) {
	h := newHarness(t, false)
	back, gone := durableMember(t, h, "m", "team")
	gone()
	p := h.poster("poster")
	post(t, p, "team", "while away")
	h.settled()
	e := back()
	got := collect(t, e, 2*time.Second)
	if !equal(texts(got), []string{"while away"}) || !got[0].Durable || got[0].Historical {
		t.Fatalf("returning member got %v", texts(got))
	}
	_ = e.Close()
	again := back()
	if got := collect(t, again, 0); len(got) != 0 {
		t.Fatalf("delivered again: %v", texts(got))
	}
}

func TestConformance34_UnackedCopyRedelivered(t *testing.T) {
	h := newHarness(t, false)
	_, gone := durableMember(t, h, "m", "team")
	gone()
	st, err := h.js.Stream(ctxT(t), wire.DlvStream(space))
	if err != nil {
		t.Fatal(err)
	}
	lister := st.ListConsumers(ctxT(t))
	n := 0
	for info := range lister.Info() {
		if strings.HasPrefix(info.Name, "dlv_local-m-") {
			n++
			if info.Config.AckWait != 60*time.Second {
				t.Fatalf("backstop ack wait %s, want 60s", info.Config.AckWait)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d backstop durables for m", n)
	}
}

func TestConformance35_NoCopiesFromBeforeTheJoin(t *testing.T) {
	h := newHarness(t, false)
	h.setClass("team", mesh.ClassDurable)
	off := false
	if _, err := h.reg.Set(ctxT(t), "team", mesh.ChannelConfig{Replay: &off}); err != nil {
		t.Fatal(err)
	}
	p := h.poster("poster")
	post(t, p, "team", "before")
	back, gone := durableMember(t, h, "m", "team")
	gone()
	post(t, p, "team", "after")
	h.settled()
	if got := texts(collect(t, back(), 2*time.Second)); !equal(got, []string{"after"}) {
		t.Fatalf("got %v, want only the post after the join", got)
	}
}

func TestConformance36And37_LeaveIsAHardBoundary(t *testing.T) {
	h := newHarness(t, false)
	off := false
	if _, err := h.reg.Set(ctxT(t), "team", mesh.ChannelConfig{Replay: &off}); err != nil {
		t.Fatal(err)
	}
	path, _ := h.mint(agent{name: "m", subscribe: []string{"team"}})
	m := h.connect(path, mesh.Options{OneShot: true})
	p := h.poster("poster")
	post(t, p, "team", "pending at leave")
	h.settled()
	if left, err := m.Leave(ctxT(t), "team"); err != nil || !left {
		t.Fatalf("leave: %v %v", left, err)
	}
	post(t, p, "team", "after leave")
	h.settled()
	_ = m.Close()
	back := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	if got := texts(collect(t, back, 2*time.Second)); !equal(got, []string{"pending at leave"}) {
		t.Fatalf("got %v: the copy pending at leave stays deliverable, nothing after it", got)
	}
}

func TestConformance38_RejoinDoesNotRedeliverTheGap(t *testing.T) {
	h := newHarness(t, false)
	off := false
	if _, err := h.reg.Set(ctxT(t), "team", mesh.ChannelConfig{Replay: &off}); err != nil {
		t.Fatal(err)
	}
	path, _ := h.mint(agent{name: "m", subscribe: []string{"team"}})
	m := h.connect(path, mesh.Options{OneShot: true})
	if _, err := m.Leave(ctxT(t), "team"); err != nil {
		t.Fatal(err)
	}
	p := h.poster("poster")
	post(t, p, "team", "gap")
	h.settled()
	if _, err := m.Join(ctxT(t), "team"); err != nil {
		t.Fatal(err)
	}
	ms, _ := m.Memberships(ctxT(t))
	if len(ms) != 1 || ms[0].Generation != 2 {
		t.Fatalf("rejoin: %+v, want generation 2", ms)
	}
	post(t, p, "team", "after rejoin")
	h.settled()
	_ = m.Close()
	back := h.connect(path, mesh.Options{OneShot: true})
	if got := texts(collect(t, back, 2*time.Second)); !equal(got, []string{"after rejoin"}) {
		t.Fatalf("got %v: the gap must not come back", got)
	}
}

func TestConformance39_NoServiceMeansLiveWithAReason(t *testing.T) {
	h := newHarness(t, true)
	path, _ := h.mint(agent{name: "m", allowSub: []string{"team"}})
	m := h.connect(path, mesh.Options{OneShot: true})
	r, err := m.Join(ctxT(t), "team")
	if err != nil || !r.Joined || r.Durable || !strings.Contains(r.Reason, "durable backstop unavailable") {
		t.Fatalf("join without a service: %+v %v", r, err)
	}
}

func TestConformance40_RevokedChannelCopyDropped(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(agent{name: "m", subscribe: []string{"team", "gen"}})
	m := h.connect(path, mesh.Options{OneShot: true})
	_ = m.Close()
	// Narrow the lifecycle's read ACL to gen only.
	acl, _ := h.js.KeyValue(ctxT(t), wire.ACLBucket(space))
	row := wire.ACLRow{Principal: id.Principal.ID(), LifecycleUID: id.UID, AllowSubscribe: []string{"gen"}, Revision: 2, UpdatedAt: time.Now()}
	b, _ := json.Marshal(row)
	if _, err := acl.Put(ctxT(t), wire.ACLKey(id.Principal, id.UID), b); err != nil {
		t.Fatal(err)
	}
	p := h.poster("poster")
	post(t, p, "team", "revoked")
	post(t, p, "gen", "allowed")
	h.settled()
	back := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	if got := texts(collect(t, back, 2*time.Second)); !equal(got, []string{"allowed"}) {
		t.Fatalf("got %v: the revoked channel's copy must be dropped", got)
	}
}

func TestConformance41_NoCopyOfOwnPost(t *testing.T) {
	h := newHarness(t, false)
	path, _ := h.mint(agent{name: "m", subscribe: []string{"team"}})
	m := h.connect(path, mesh.Options{OneShot: true})
	post(t, m, "team", "mine")
	p := h.poster("poster")
	post(t, p, "team", "theirs")
	h.settled()
	_ = m.Close()
	back := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	if got := texts(collect(t, back, 2*time.Second)); !equal(got, []string{"theirs"}) {
		t.Fatalf("got %v", got)
	}
}

// mentionTarget connects a peer so presence knows its lifecycle, then
// takes it offline; it stays on the roster.
func mentionTarget(t *testing.T, h *harness, a agent) func() *mesh.Endpoint {
	t.Helper()
	path, _ := h.mint(a)
	e := h.connect(path, mesh.Options{Subscribe: []string{}})
	_ = e.Close()
	return func() *mesh.Endpoint { return h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}}) }
}

func TestConformance42_MentionReachesOfflineAuthorizedPeer(t *testing.T) {
	h := newHarness(t, false)
	h.setClass("live", mesh.ClassLive)
	back := mentionTarget(t, h, agent{name: "carol", allowSub: []string{"live"}})
	p := h.poster("poster")
	waitRoster(t, p, "carol")
	post(t, p, "live", "ping @carol", mesh.WithMentions("Carol"))
	h.settled()
	if got := texts(collect(t, back(), 2*time.Second)); !equal(got, []string{"ping @carol"}) {
		t.Fatalf("mentioned offline peer got %v", got)
	}
}

func TestConformance43_MentionNeverWidensReads(t *testing.T) {
	h := newHarness(t, false)
	h.setClass("live", mesh.ClassLive)
	back := mentionTarget(t, h, agent{name: "dave", allowSub: []string{"other"}})
	p := h.poster("poster")
	waitRoster(t, p, "dave")
	post(t, p, "live", "for dave", mesh.WithMentions("dave"))
	post(t, p, "team", "marker")
	h.settled()
	if got := collect(t, back(), 500*time.Millisecond); len(got) != 0 {
		t.Fatalf("a peer outside the channel's ACL got %v", texts(got))
	}
}

func TestConformance44_UnknownOrAmbiguousMentionNoCopy(t *testing.T) {
	h := newHarness(t, false)
	h.setClass("live", mesh.ClassLive)
	p := h.poster("poster")
	if _, err := p.Send(ctxT(t), "live", "hi", mesh.WithMentions("nobody")); !errors.Is(err, mesh.ErrNoPeer) {
		t.Fatalf("unknown mention: %v", err)
	}
	h.settled()
	st, _ := h.js.Stream(ctxT(t), wire.InboxStream(space))
	if n := st.CachedInfo().State.Msgs; n != 0 {
		t.Fatalf("%d stored copies for an unknown mention", n)
	}
}

func TestConformance45And46_RetentionCaps(t *testing.T) {
	h := newHarness(t, false)
	for _, c := range []struct {
		stream string
		want   int64
	}{{wire.ChatStream(space), 1000}, {wire.InboxStream(space), 1000}, {wire.DlvStream(space), 1000}} {
		st, err := h.js.Stream(ctxT(t), c.stream)
		if err != nil {
			t.Fatal(err)
		}
		cfg := st.CachedInfo().Config
		if cfg.MaxMsgsPerSubject != c.want || cfg.Discard != jetstream.DiscardOld {
			t.Fatalf("%s: %d per subject, discard %v", c.stream, cfg.MaxMsgsPerSubject, cfg.Discard)
		}
	}
	// The CHAT cap in action: 1005 posts by one sender keep the newest 1000.
	ctx := ctxT(t)
	subj := wire.Root(space) + ".chat.local.poster.cap"
	var posts []*nats.Msg
	for i := range 1005 {
		body := fmt.Sprintf(`{"id":"c%d","ts":1,"space":%q,"from":{"id":"local.poster","name":"poster"},"channel":"cap","parts":[{"kind":"text","text":"%d"}]}`, i, space, i)
		posts = append(posts, &nats.Msg{Subject: subj, Data: []byte(body)})
	}
	testmesh.Store(t, h.op, posts...)
	st, _ := h.js.Stream(ctx, wire.ChatStream(space))
	info, _ := st.Info(ctx, jetstream.WithSubjectFilter(subj))
	if n := info.State.Subjects[subj]; n != 1000 {
		t.Fatalf("%d retained for one sender and channel, want 1000", n)
	}
}

func TestFamilyHoldStoresChannelsCreatedAfterTheJoin(t *testing.T) {
	h := newHarness(t, false)
	back, gone := durableMember(t, h, "m", "team.>", "team.api")
	gone()
	p := h.poster("poster")
	post(t, p, "team.brand.new", "new channel")
	post(t, p, "team.api", "both holds")
	post(t, p, "team", "root is not in the family")
	h.settled()
	got := texts(collect(t, back(), 2*time.Second))
	if !equal(got, []string{"new channel", "both holds"}) {
		t.Fatalf("family member got %v", got)
	}
}

func TestFamilyStarPatternIsLiveOnlyAndSaysSo(t *testing.T) {
	h := newHarness(t, false)
	path, _ := h.mint(agent{name: "m", allowSub: []string{"perm.*", "team.>"}})
	m := h.connect(path, mesh.Options{OneShot: true})
	r, err := m.Join(ctxT(t), "team.*")
	if err != nil || !r.Joined || r.Durable || !strings.Contains(r.Reason, "followed live only") {
		t.Fatalf("join team.*: %+v %v", r, err)
	}
	if _, err := m.Join(ctxT(t), "perm.>"); !errors.Is(err, mesh.ErrNotInReadACL) {
		t.Fatalf("perm.* must not contain perm.>: %v", err)
	}
}

func TestServiceRestartMidFanoutLosesAndDuplicatesNothing(t *testing.T) {
	h := newHarness(t, false)
	back, gone := durableMember(t, h, "m", "team")
	gone()
	p := h.poster("poster")
	for i := range 30 {
		post(t, p, "team", fmt.Sprintf("p%02d", i))
		if i == 10 {
			h.svc.Close()
			h.startService()
		}
	}
	h.settled()
	got := texts(collect(t, back(), 2*time.Second))
	if len(got) != 30 {
		t.Fatalf("after a restart mid fan-out the member got %d posts: %v", len(got), got)
	}
	for i, s := range got {
		if s != fmt.Sprintf("p%02d", i) {
			t.Fatalf("post %d is %q: %v", i, s, got)
		}
	}
}

// waitRoster waits until a name is on the endpoint's roster.
func waitRoster(t *testing.T, e *mesh.Endpoint, name string) {
	t.Helper()
	testutil.WaitFor(t, 5*time.Second, func() error {
		peers, _, err := e.Roster(ctxT(t))
		if err != nil {
			return err
		}
		for _, p := range peers {
			if p.Name == name {
				return nil
			}
		}
		return fmt.Errorf("%s not on the roster", name)
	})
}

var (
	_ = context.Background
	_ = delivery.FanoutConsumer
)

func TestOverflowSaysSoOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1010 durable posts")
	}
	h := newHarness(t, false)
	back, gone := durableMember(t, h, "m", "team")
	gone()
	subj := wire.Root(space) + ".chat.local.poster.team"
	const n = delivery.MaxStoredCopies + 10
	var posts []*nats.Msg
	for i := range n {
		body := fmt.Sprintf(`{"id":"o%d","ts":1,"space":%q,"from":{"id":"local.poster","name":"poster"},"channel":"team","parts":[{"kind":"text","text":"p%04d"}]}`, i, space, i)
		posts = append(posts, &nats.Msg{Subject: subj, Data: []byte(body)})
	}
	testmesh.Store(t, h.op, posts...)
	h.settled()
	e := back()
	var got []string
	for {
		items := collect(t, e, 0)
		if len(items) == 0 {
			break
		}
		got = append(got, texts(items)...)
	}
	notices := 0
	for _, s := range got {
		if strings.Contains(s, "overflowed") {
			notices++
		}
	}
	if notices != 1 || len(got) > delivery.MaxStoredCopies || got[0] == "p0000" {
		t.Fatalf("%d items, %d notices, first %q: want at most %d, one notice, the oldest dropped", len(got), notices, got[0], delivery.MaxStoredCopies)
	}
}

func TestConformance34_UnackedCopyIsRedelivered(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(agent{name: "m", subscribe: []string{"team"}})
	first := h.connect(path, mesh.Options{OneShot: true})
	_ = first.Close()
	// The space waits 60 s; shorten this member's wait so the test need
	// not sit it out: the broker's redelivery is the same mechanism.
	cons, err := h.js.Consumer(ctxT(t), wire.DlvStream(space), wire.DlvConsumer(id.Principal, id.UID))
	if err != nil {
		t.Fatal(err)
	}
	cfg := cons.CachedInfo().Config
	cfg.AckWait = time.Second
	if _, err := h.js.UpdateConsumer(ctxT(t), wire.DlvStream(space), cfg); err != nil {
		t.Fatal(err)
	}
	post(t, h.poster("poster"), "team", "ack me")
	h.settled()
	e := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	items, err := e.Collect(ctxT(t), 2*time.Second)
	if err != nil || len(items) != 1 {
		t.Fatalf("first delivery: %d %v", len(items), err)
	}
	_ = e.Close() // never acked
	again := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	got := collect(t, again, 5*time.Second)
	if !equal(texts(got), []string{"ack me"}) {
		t.Fatalf("redelivered %v", texts(got))
	}
}
