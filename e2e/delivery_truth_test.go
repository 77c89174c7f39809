package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/testmesh"
)

// rawPoster is a plain nats.go connection holding a minted credential, for
// posts the CLI would never send (an empty id, no parts) and for fast
// bursts that know exactly which posts the mesh acknowledged.
type rawPoster struct {
	nc *nats.Conn
}

func connectPoster(t *testing.T, home string, id mintedID, name string) *rawPoster {
	t.Helper()
	st, code := statusJSON(t, home)
	if code != 0 || st.URL == "" {
		t.Fatalf("status --json: exit %d, %+v", code, st)
	}
	nc, err := nats.Connect(st.URL, nats.UserCredentials(id.Creds),
		nats.CustomInboxPrefix("_INBOX_local-"+name+"-"+id.LifecycleUID),
		nats.Timeout(5*time.Second), nats.MaxReconnects(0))
	if err != nil {
		t.Fatalf("connecting as %s: %v", name, err)
	}
	t.Cleanup(nc.Close)
	return &rawPoster{nc: nc}
}

// post publishes body on subject and reports whether the mesh stored it
// (its stored notice came).
func (p *rawPoster) post(subject string, body map[string]any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = testmesh.Publish(p.nc, 3*time.Second, &nats.Msg{Subject: subject, Data: b})
	return err
}

func TestEmptyIDAndBarePostsReachAnOfflineDurableMember(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	mustCotal(t, home, "channels", "set", "team", "--class", "durable", "--replay", "off")
	m := mint(t, home, "member", "--subscribe", "team")
	poster := mint(t, home, "poster", "--allow-publish", "team")
	inboxTexts(t, home, m.Creds) // joins #team durably, then goes away

	// The receive rules (spec §4.1) accept all of these: an empty id (twice,
	// never coalesced), no parts, no ts. Only a publisher must not make them.
	p := connectPoster(t, home, poster, "poster")
	from := map[string]string{"id": "local.poster", "name": "poster"}
	text := func(s string) []map[string]string { return []map[string]string{{"kind": "text", "text": s}} }
	for _, body := range []map[string]any{
		{"id": "", "ts": time.Now().UnixMilli(), "space": "default", "from": from, "channel": "team", "parts": text("empty id one")},
		{"id": "", "ts": time.Now().UnixMilli(), "space": "default", "from": from, "channel": "team", "parts": text("empty id two")},
		{"id": "no-parts", "ts": time.Now().UnixMilli(), "space": "default", "from": from, "channel": "team", "parts": []any{}},
		{"id": "no-ts", "space": "default", "from": from, "channel": "team", "parts": text("no ts")},
	} {
		if err := p.post("cotal.default.chat.local.poster.team", body); err != nil {
			t.Fatalf("posting %v: %v", body, err)
		}
	}
	var got []string
	var stderr string
	waitFor(t, 10*time.Second, func() error {
		stdout, errOut, code := runCotal(t, home, "--creds", m.Creds, "inbox", "--json")
		if code != 0 {
			t.Fatalf("inbox: exit %d\n%s\n%s", code, stdout, errOut)
		}
		stderr += errOut
		for _, it := range parseInbox(t, stdout) {
			got = append(got, it.text())
		}
		if len(got) < 4 && !strings.Contains(stderr, "dropped") {
			return fmt.Errorf("%d of 4 so far: %q", len(got), got)
		}
		return nil
	})
	if strings.Join(got, "|") != "empty id one|empty id two||no ts" || strings.Contains(stderr, "dropped") {
		t.Fatalf("offline member got %q (stderr %q); want all four posts, in order, none dropped", got, stderr)
	}
}

func TestMentionOfAKnownOfflineIdentityIsStored(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	mustCotal(t, home, "channels", "set", "team.live", "--class", "live", "--replay", "off")
	carol := mint(t, home, "carol", "--allow-subscribe", "team.live")
	mustCotal(t, home, "--creds", carol.Creds, "inbox")
	// A restarted mesh has forgotten every presence it saw: only the
	// identity records still know carol.
	mustCotal(t, home, "down")
	upDetached(t, home)
	// The receipt says which mentions got a stored copy: carol's read ACL
	// covers the channel; dave is known but may not read it.
	mint(t, home, "dave", "--allow-subscribe", "elsewhere")
	out := mustCotal(t, home, "send", "msg", "team.live", "for you", "--mention", "carol", "--mention", "dave")
	if !strings.Contains(out, "@carol gets a stored copy") || !strings.Contains(out, "@dave gets no stored copy") {
		t.Fatalf("receipt %q: want it to say carol gets a stored copy and dave none", out)
	}
	var got []string
	waitFor(t, 10*time.Second, func() error {
		for _, it := range parseInbox(t, mustCotal(t, home, "--creds", carol.Creds, "inbox", "--json")) {
			got = append(got, it.text())
		}
		if len(got) == 0 {
			return fmt.Errorf("nothing for carol yet")
		}
		return nil
	})
	if strings.Join(got, "|") != "for you" {
		t.Fatalf("carol got %q; want the post that mentioned her, once", got)
	}
}
