package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// storedItem is the part of `cotal inbox --json` the durable tests read.
type storedItem struct {
	Kind       string `json:"kind"`
	Durable    bool   `json:"durable"`
	Historical bool   `json:"historical"`
	Message    struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"message"`
}

// inboxTexts reads the identity's inbox once (acking it) and returns the
// texts of its stored channel copies and of everything else.
func inboxTexts(t *testing.T, home, creds string) (stored, other []string) {
	t.Helper()
	out := mustCotal(t, home, "--creds", creds, "inbox", "--json")
	var items []storedItem
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("inbox --json: %v\n%s", err, out)
	}
	for _, it := range items {
		text := ""
		if len(it.Message.Parts) > 0 {
			text = it.Message.Parts[0].Text
		}
		if it.Kind == "channel" && it.Durable && !it.Historical {
			stored = append(stored, text)
		} else {
			other = append(other, text)
		}
	}
	return stored, other
}

func TestOfflineMemberGetsDurablePostsOnceAndLiveOnesNot(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	mustCotal(t, home, "channels", "set", "team", "--class", "durable", "--replay", "off")
	mustCotal(t, home, "channels", "set", "live", "--class", "live", "--replay", "off")
	m := mint(t, home, "member", "--subscribe", "team,live")
	p := mint(t, home, "poster", "--allow-publish", "team,live")

	// The member's first read joins its channels: team durably.
	if stored, other := inboxTexts(t, home, m.Creds); len(stored)+len(other) != 0 {
		t.Fatalf("fresh member's inbox: %v %v", stored, other)
	}
	mustCotal(t, home, "--creds", p.Creds, "send", "msg", "team", "kept for you")
	mustCotal(t, home, "--creds", p.Creds, "send", "msg", "live", "gone with the wind")
	var got []string
	waitFor(t, 10*time.Second, func() error {
		stored, other := inboxTexts(t, home, m.Creds)
		if len(other) != 0 {
			t.Fatalf("non-stored items reached the offline member: %v", other)
		}
		got = append(got, stored...)
		if len(got) == 0 {
			return fmt.Errorf("nothing stored yet")
		}
		return nil
	})
	if strings.Join(got, "|") != "kept for you" {
		t.Fatalf("returning member got %v; want the durable post once and never the live one", got)
	}
	if stored, other := inboxTexts(t, home, m.Creds); len(stored)+len(other) != 0 {
		t.Fatalf("second read: %v %v", stored, other)
	}
}

func TestLeaveThenRejoinDoesNotRedeliverTheGap(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	mustCotal(t, home, "channels", "set", "team", "--class", "durable", "--replay", "off")
	m := mint(t, home, "member", "--subscribe", "team")
	p := mint(t, home, "poster", "--allow-publish", "team")

	j := startCotal(t, home, "--creds", m.Creds, "join")
	waitFor(t, 10*time.Second, func() error {
		if !strings.Contains(j.stdout.String(), "durable backstop active") {
			return fmt.Errorf("join has not joined #team durably yet:\n%s", j.stdout.String())
		}
		return nil
	})
	fmt.Fprintln(j.stdin, "/leave team")
	waitFor(t, 10*time.Second, func() error {
		if !strings.Contains(j.stdout.String(), "left #team") {
			return fmt.Errorf("no leave yet:\n%s", j.stdout.String())
		}
		return nil
	})
	mustCotal(t, home, "--creds", p.Creds, "send", "msg", "team", "in the gap")
	fmt.Fprintln(j.stdin, "/join team")
	waitFor(t, 10*time.Second, func() error {
		if strings.Count(j.stdout.String(), "durable backstop active") < 2 {
			return fmt.Errorf("no rejoin yet:\n%s", j.stdout.String())
		}
		return nil
	})
	fmt.Fprintln(j.stdin, "/quit")
	if code := j.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("join exited %d:\n%s", code, j.stderr.String())
	}
	mustCotal(t, home, "--creds", p.Creds, "send", "msg", "team", "after the rejoin")
	var got []string
	waitFor(t, 10*time.Second, func() error {
		stored, _ := inboxTexts(t, home, m.Creds)
		got = append(got, stored...)
		if len(got) == 0 {
			return fmt.Errorf("nothing stored yet")
		}
		return nil
	})
	if strings.Join(got, "|") != "after the rejoin" {
		t.Fatalf("member got %v; the gap must not be redelivered", got)
	}
}

func TestMeshRestartMidFanoutLosesAndDuplicatesNothing(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	mustCotal(t, home, "channels", "set", "team", "--class", "durable", "--replay", "off")
	m := mint(t, home, "member", "--subscribe", "team")
	p := mint(t, home, "poster", "--allow-publish", "team")
	inboxTexts(t, home, m.Creds) // join durably
	for i := range 10 {
		if i == 5 {
			mustCotal(t, home, "down")
			upDetached(t, home)
		}
		mustCotal(t, home, "--creds", p.Creds, "send", "msg", "team", fmt.Sprintf("post %d", i))
	}
	var got []string
	waitFor(t, 15*time.Second, func() error {
		stored, _ := inboxTexts(t, home, m.Creds)
		got = append(got, stored...)
		if len(got) < 10 {
			return fmt.Errorf("%d of 10 so far: %v", len(got), got)
		}
		return nil
	})
	for i, s := range got {
		if s != fmt.Sprintf("post %d", i) {
			t.Fatalf("after a restart the member got %v; want posts 0-9 once each, in order", got)
		}
	}
	if len(got) != 10 {
		t.Fatalf("got %d posts: %v", len(got), got)
	}
}
