package presence_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/presence"
)

func TestParseStatusAndAttention(t *testing.T) {
	tests := []struct {
		in      string
		wantErr bool
	}{
		{"idle", false}, {"waiting", false}, {"working", false},
		{"offline", true}, {"", true}, {"Idle", true}, {"busy", true},
	}
	for _, tt := range tests {
		st, err := presence.ParseStatus(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && string(st) != tt.in) {
			t.Errorf("ParseStatus(%q) = %q, %v", tt.in, st, err)
		}
		if err != nil && !errors.Is(err, presence.ErrInvalidStatus) {
			t.Errorf("ParseStatus(%q) error %v does not wrap ErrInvalidStatus", tt.in, err)
		}
	}
	for in, ok := range map[string]bool{"open": true, "dnd": true, "focus": true, "": false, "away": false} {
		if _, err := presence.ParseAttention(in); (err == nil) != ok {
			t.Errorf("ParseAttention(%q) error %v", in, err)
		}
	}
}

// Set moves statusSince only when the status changes, activitySince only
// when the activity does, activeAt when the status becomes working, and
// writes at once rather than at the next heartbeat.
func TestSetUpdatesSinceOnlyOnChange(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	rec := record(t, kv)
	w, _ := startWriter(t, kv, "hana")
	r0 := w.Record()
	if r0.Status != presence.Idle || r0.StatusSince == 0 || r0.Attention != presence.Open {
		t.Fatalf("initial record %+v, want idle with statusSince and attention open", r0)
	}
	if r0.Card.ProtocolVersion != presence.ProtocolVersion || r0.Card.Owner != "local" || r0.Card.Actor != "hana" || r0.Card.Kind != presence.KindAgent {
		t.Fatalf("card %+v, want protocolVersion, owner, actor and kind filled", r0.Card)
	}
	// Distinct milliseconds between steps, so a moved timestamp is visible.
	tick := func() {
		t.Helper()
		before := time.Now().UnixMilli()
		testutil.WaitFor(t, time.Second, func() error {
			if time.Now().UnixMilli() <= before {
				return errors.New("same millisecond")
			}
			return nil
		})
	}

	tick()
	if err := w.Set(presence.Working, "reading"); err != nil {
		t.Fatal(err)
	}
	r1 := w.Record()
	if r1.StatusSince <= r0.StatusSince || r1.ActiveAt != r1.StatusSince || r1.ActivitySince != r1.StatusSince {
		t.Fatalf("idle->working %+v: statusSince, activeAt and activitySince should all move", r1)
	}

	tick()
	if err := w.Set(presence.Working, "writing"); err != nil {
		t.Fatal(err)
	}
	r2 := w.Record()
	if r2.StatusSince != r1.StatusSince || r2.ActiveAt != r1.ActiveAt || r2.ActivitySince <= r1.ActivitySince {
		t.Fatalf("same status, new activity %+v: only activitySince should move", r2)
	}

	tick()
	if err := w.Set(presence.Waiting, "writing"); err != nil {
		t.Fatal(err)
	}
	r3 := w.Record()
	if r3.StatusSince <= r2.StatusSince || r3.ActivitySince != r2.ActivitySince || r3.ActiveAt != r2.ActiveAt {
		t.Fatalf("new status, same activity %+v: only statusSince should move", r3)
	}

	tick()
	if err := w.Set(presence.Waiting, ""); err != nil {
		t.Fatal(err)
	}
	if r4 := w.Record(); r4.StatusSince != r3.StatusSince || r4.ActivitySince != 0 || r4.Activity != "" {
		t.Fatalf("cleared activity %+v: activitySince should clear, statusSince stay", r4)
	}

	// Written at once: well inside one heartbeat of the Set.
	set := time.Now()
	if err := w.Set(presence.Idle, "done"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, presence.Heartbeat, func() error {
		revs := rec.of("local.hana")
		if last := revs[len(revs)-1].rec; last.Status != presence.Idle || last.Activity != "done" {
			return fmt.Errorf("last written %s %q", last.Status, last.Activity)
		}
		return nil
	})
	if took := time.Since(set); took > presence.Heartbeat/2 {
		t.Logf("the change took %s to be written", took)
	}
}

func TestWriterRefusesBadCard(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	for _, c := range []presence.Card{
		{ID: "alice"},
		{ID: "local.a.b"},
		{ID: "local.a-b"},
		{ID: "local.ann", Actor: "bob"},
		{ID: "local.ann", Kind: "robot"},
		{ID: "local.ann", Name: strings.Repeat("x", presence.MaxNameLength+1)},
	} {
		w := presence.NewWriter(kv, c, "")
		if err := w.Start(context.Background()); !errors.Is(err, presence.ErrInvalidCard) {
			t.Errorf("Start with card %+v: %v, want ErrInvalidCard", c, err)
		}
	}
	if _, err := kv.Keys(context.Background()); !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Fatalf("a refused card was written (keys: %v)", err)
	}
}

// The first write must succeed; its error names the key and the bucket.
func TestWriterFirstWriteMustSucceed(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	w := presence.NewWriter(kv, card("ivy"), "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := w.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "local.ivy") || !strings.Contains(err.Error(), kv.Bucket()) {
		t.Fatalf("Start on a dead context: %v, want an error naming local.ivy and %s", err, kv.Bucket())
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatalf("Close of a writer that never started: %v", err)
	}
	if _, err := kv.Get(context.Background(), "local.ivy"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("a writer that never started wrote something: %v", err)
	}
}

// Writes failing for a full TTL are reported once (presence-write-stuck);
// a successful write re-arms the report.
func TestWriterReportsStuckOncePerEpisode(t *testing.T) {
	t.Parallel()
	js, kv := space(t)
	stuck := make(chan error, 4)
	startWriter(t, kv, "jo", presence.OnStuck(func(err error) { stuck <- err }))
	cfg := jetstream.KeyValueConfig{Bucket: kv.Bucket(), TTL: presence.TTL, History: 1, Storage: jetstream.MemoryStorage}
	ctx := context.Background()

	for episode := 1; episode <= 2; episode++ {
		broke := time.Now()
		if err := js.DeleteKeyValue(ctx, kv.Bucket()); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-stuck:
			if !errors.Is(err, presence.ErrWriteStuck) || !strings.Contains(err.Error(), "local.jo") {
				t.Fatalf("episode %d: OnStuck(%v), want ErrWriteStuck naming the key", episode, err)
			}
			if took := time.Since(broke); took < presence.TTL {
				t.Fatalf("episode %d: reported stuck after %s, before a full TTL", episode, took)
			}
		case <-time.After(presence.TTL + 3*presence.Heartbeat):
			t.Fatalf("episode %d: no stuck report", episode)
		}
		if _, err := js.CreateKeyValue(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 2*presence.Heartbeat, func() error {
			_, err := kv.Get(ctx, "local.jo")
			return err
		})
		select {
		case err := <-stuck:
			t.Fatalf("episode %d: reported twice: %v", episode, err)
		default:
		}
	}
}
