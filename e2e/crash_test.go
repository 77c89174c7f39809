package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/delivery"
)

// takeoverBound bounds the first delivery after a kill -9 and an up: the
// new mesh takes the dead one's delivery lease at once, so its first
// delivery comes well before the dead lease would even have been renewed
// (delivery.LeaseRenew; it would expire after three times that). What is
// left is the CLI reads that poll for it, slow on a loaded machine.
const takeoverBound = delivery.LeaseRenew

// killMesh kills the detached mesh with SIGKILL and waits until it is gone.
func killMesh(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
	waitGone(t, pid)
}

// deliveryHolder reads the delivery line of `cotal status --json`.
func deliveryHolder(t *testing.T, home string) string {
	t.Helper()
	out, _, _ := runCotal(t, home, "status", "--json")
	var st struct {
		Delivery string `json:"delivery"`
	}
	_ = json.Unmarshal([]byte(out), &st)
	return st.Delivery
}

func TestAfterKillNineTheNewMeshServesDurableDeliveryAtOnce(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	_, pid := upDetached(t, home)
	mustCotal(t, home, "channels", "set", "team", "--class", "durable", "--replay", "off")
	m := mint(t, home, "member", "--subscribe", "team")
	poster := mint(t, home, "poster", "--allow-publish", "team")
	inboxTexts(t, home, m.Creds)
	waitFor(t, 10*time.Second, func() error {
		if d := deliveryHolder(t, home); !strings.HasPrefix(d, "serving") {
			return fmt.Errorf("delivery %q", d)
		}
		return nil
	})

	killMesh(t, pid)
	_, newPID := upDetached(t, home)
	start := time.Now()
	if d := deliveryHolder(t, home); strings.Contains(d, fmt.Sprintf("/%d)", pid)) {
		t.Errorf("status names the killed holder: %q", d)
	}
	mustCotal(t, home, "--creds", poster.Creds, "send", "msg", "team", "after the crash")
	var got []string
	waitFor(t, 30*time.Second, func() error {
		stored, _ := inboxTexts(t, home, m.Creds)
		got = append(got, stored...)
		if len(got) == 0 {
			return fmt.Errorf("nothing stored yet")
		}
		return nil
	})
	if took := time.Since(start); took > takeoverBound {
		t.Errorf("first durable delivery after the restart took %s; want under %s (the new mesh takes the dead one's lease at once)", took.Round(10*time.Millisecond), takeoverBound)
	}
	if d := deliveryHolder(t, home); !strings.HasSuffix(d, fmt.Sprintf("/%d)", newPID)) {
		t.Errorf("status delivery %q; want it served by the new mesh (pid %d)", d, newPID)
	}
}

// cycleFigures are one kill -9 cycle's numbers.
type cycleFigures struct {
	acked, lost, doubled, unacked int
	firstDelivery                 time.Duration
}

func TestKillNineCyclesLoseAndDoubleNothing(t *testing.T) {
	t.Parallel()
	const cycles, posts = 5, 200
	home := t.TempDir()
	_, pid := upDetached(t, home)
	mustCotal(t, home, "channels", "set", "team", "--class", "durable", "--replay", "off")
	m := mint(t, home, "member", "--subscribe", "team")
	poster := mint(t, home, "poster", "--allow-publish", "team")
	inboxTexts(t, home, m.Creds) // the member holds #team durably and stays offline

	seen := map[string]int{} // every text the member has read, over all cycles
	read := func() []string {
		stored, _ := inboxTexts(t, home, m.Creds)
		for _, s := range stored {
			seen[s]++
		}
		return stored
	}
	var figures []cycleFigures
	for c := range cycles {
		kill := 1 + rand.IntN(posts-2)
		acked := map[string]bool{}
		var f cycleFigures
		p := connectPoster(t, home, poster, "poster")
		post := func(i int) error {
			text := fmt.Sprintf("c%d-p%03d", c, i)
			err := p.post("cotal.default.chat.local.poster.team", map[string]any{
				"id": fmt.Sprintf("kill9-%d-%d-%d", time.Now().UnixNano(), c, i), "ts": time.Now().UnixMilli(), "space": "default",
				"from": map[string]string{"id": "local.poster", "name": "poster"}, "channel": "team",
				"parts": []map[string]string{{"kind": "text", "text": text}},
			})
			if err == nil {
				acked[text] = true
			} else {
				f.unacked++
			}
			return err
		}
		// The kill races the posts: a goroutine kills the mesh while the
		// publisher goes on, so a post may be in flight when it dies.
		killed := make(chan struct{})
		next := 0
		for ; next < posts; next++ {
			if next == kill {
				go func() {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					close(killed)
				}()
			}
			if err := post(next); err != nil {
				if next < kill {
					t.Fatalf("cycle %d: post %d before the kill: %v", c, next, err)
				}
				next++
				break
			}
		}
		<-killed
		waitGone(t, pid)
		_, pid = upDetached(t, home)
		restarted := time.Now()
		p = connectPoster(t, home, poster, "poster")
		first := fmt.Sprintf("c%d-p%03d", c, posts)
		if err := post(posts); err != nil {
			t.Fatalf("cycle %d: first post after the restart: %v", c, err)
		}
		waitFor(t, 30*time.Second, func() error {
			read()
			if seen[first] == 0 {
				return fmt.Errorf("cycle %d: %s not delivered yet", c, first)
			}
			return nil
		})
		f.firstDelivery = time.Since(restarted)
		for i := next; i < posts; i++ {
			if err := post(i); err != nil {
				t.Fatalf("cycle %d: post %d after the restart: %v", c, i, err)
			}
		}
		waitFor(t, 30*time.Second, func() error {
			read()
			missing := 0
			for text := range acked {
				if seen[text] == 0 {
					missing++
				}
			}
			if missing > 0 {
				return fmt.Errorf("cycle %d: %d acked posts not delivered yet", c, missing)
			}
			return nil
		})
		// One more read proves nothing is still on its way twice.
		read()
		f.acked = len(acked)
		for text := range acked {
			switch n := seen[text]; {
			case n == 0:
				f.lost++
			case n > 1:
				f.doubled++
			}
		}
		figures = append(figures, f)
		t.Logf("cycle %d: kill -9 after post %d; %d posts acked, %d unacked at the kill, %d lost, %d doubled, first delivery %s after up",
			c, kill, f.acked, f.unacked, f.lost, f.doubled, f.firstDelivery.Round(time.Millisecond))
	}
	for text, n := range seen {
		if n > 1 {
			t.Errorf("%s surfaced %d times", text, n)
		}
	}
	for c, f := range figures {
		if f.lost != 0 || f.doubled != 0 {
			t.Errorf("cycle %d: %d acked posts lost, %d doubled", c, f.lost, f.doubled)
		}
		if f.firstDelivery > takeoverBound {
			t.Errorf("cycle %d: first delivery after the restart took %s; want under %s", c, f.firstDelivery.Round(time.Millisecond), takeoverBound)
		}
	}
}
