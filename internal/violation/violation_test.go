package violation

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestParseAndRoute(t *testing.T) {
	pub := fmt.Errorf("%w: Permissions Violation for Publish to \"a.b\"", nats.ErrPermissionViolation)
	sub := fmt.Errorf("%w: Permissions Violation for Subscription to \"c.>\" using queue \"q\"", nats.ErrPermissionViolation)
	for _, tc := range []struct {
		err         error
		subject, op string
		ok          bool
	}{
		{pub, "a.b", Publish, true},
		{sub, "c.>", Subscription, true},
		{errors.New("Permissions Violation for Publish to \"x\""), "", "", false}, // not a nats permission error
		{nil, "", "", false},
	} {
		s, op, ok := Parse(tc.err)
		if s != tc.subject || op != tc.op || ok != tc.ok {
			t.Errorf("Parse(%v) = %q %q %v", tc.err, s, op, ok)
		}
	}
	tr := New()
	ch, stop := tr.Watch("a.b")
	defer stop()
	before := time.Now()
	if _, _, ok := tr.Record(pub); !ok {
		t.Fatal("a refusal was not recorded")
	}
	select {
	case err := <-ch:
		if err != pub {
			t.Fatalf("watcher got %v", err)
		}
	default:
		t.Fatal("the watcher of a.b was not told")
	}
	if tr.Since("a.b", Publish, before) == nil || tr.Since("a.b", Subscription, before) != nil || tr.Since("a.b", Publish, time.Now().Add(time.Second)) != nil {
		t.Fatal("Since does not match subject, operation and time")
	}
}
