package broker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

// A read list left out reads nothing, as an acting endpoint's does: the
// broker no longer reads a nil allowSubscribe as the subscribe list, so an
// identity that joins a channel and names no read list is refused, not
// granted a read the mesh endpoint acting for it would refuse.
func TestReadListLeftOutIsRefusedNotWidened(t *testing.T) {
	id := broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "alice"}, Subscribe: []string{"team"}}
	err := id.Normalize()
	if err == nil || !strings.Contains(err.Error(), `subscribe: "team" is not within allowSubscribe`) {
		t.Fatalf("Normalize of a subscribe list with no read list: %v, want a refusal", err)
	}
	if id.AllowSubscribe != nil {
		t.Errorf("Normalize filled the read list: %v", id.AllowSubscribe)
	}
}

// An identity whose lists are all left out reads and posts no channel at
// the broker; one whose read list follows the subscribe list explicitly
// reads those channels and no others.
func TestLeftOutListsGrantNothingAtTheBroker(t *testing.T) {
	b := startBroker(t, false)
	root := wire.Root(space)
	none := mintAndConnect(t, b, broker.Identity{Principal: wire.Principal{Owner: "local", Actor: "nobody"}})
	for _, subj := range []string{root + ".chat.*.*.team", root + ".chat.*.*.>"} {
		if _, err := none.nc.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 5*time.Second, func() error { _ = none.nc.Flush(); return none.sawViolation(subj) })
	}
	post := root + ".chat.local.nobody.team"
	if err := none.nc.Publish(post, []byte("x")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error { _ = none.nc.Flush(); return none.sawViolation(post) })

	same := mintAndConnect(t, b, broker.Identity{
		Principal: wire.Principal{Owner: "local", Actor: "alice"},
		Subscribe: []string{"team"}, AllowSubscribe: wire.SameAsSubscribe([]string{"team"}),
	})
	if _, err := same.nc.SubscribeSync(root + ".chat.*.*.team"); err != nil {
		t.Fatal(err)
	}
	other := root + ".chat.*.*.ops"
	if _, err := same.nc.SubscribeSync(other); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error { _ = same.nc.Flush(); return same.sawViolation(other) })
	if err := same.sawViolation(root + ".chat.*.*.team"); err == nil {
		t.Errorf("the read list that follows subscribe does not read #team")
	}
}
