package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/testmesh"
)

// repeatEvery paces the repeated sends of a test that waits for a
// background command to catch one of them.
const repeatEvery = 300 * time.Millisecond

// lockedBuffer collects a background process's output while the test reads
// it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// bgCotal is a cotal process running beside the test, with the same
// environment runCotal gives a one-shot run. done closes once it has
// exited; err is Wait's result and may be read only after that.
type bgCotal struct {
	args   []string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *lockedBuffer
	stderr *lockedBuffer
	done   chan struct{}
	err    error
}

// startCotal starts cotal with args and COTAL_HOME=home in the background.
// t's cleanup kills it if it is still running, before any `cotal down`
// registered earlier runs.
func startCotal(t *testing.T, home string, args ...string) *bgCotal {
	t.Helper()
	p := &bgCotal{args: args, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(cotalBin, args...)
	p.cmd.Env = cotalEnv(home)
	p.cmd.Dir = fakeHome
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdin = stdin
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting cotal %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// exited reports whether the process has ended.
func (p *bgCotal) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to total for the process to exit and returns its exit
// code.
func (p *bgCotal) wait(t *testing.T, total time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(total):
		t.Fatalf("cotal %s: no exit within %s\nstdout: %s\nstderr: %s", strings.Join(p.args, " "), total, p.stdout, p.stderr)
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("cotal %s: %v", strings.Join(p.args, " "), p.err)
	return -1
}

// waitStderr polls until the process has written want to stderr.
func (p *bgCotal) waitStderr(t *testing.T, total time.Duration, want string) {
	t.Helper()
	waitFor(t, total, func() error {
		if strings.Contains(p.stderr.String(), want) {
			return nil
		}
		if p.exited() {
			t.Fatalf("cotal %s exited without writing %q\nstdout: %s\nstderr: %s", strings.Join(p.args, " "), want, p.stdout, p.stderr)
		}
		return fmt.Errorf("cotal %s has not written %q to stderr yet", strings.Join(p.args, " "), want)
	})
}

// repeatUntilExit calls step at once and then every repeatEvery until p
// exits, failing t if that takes longer than total.
func repeatUntilExit(t *testing.T, p *bgCotal, total time.Duration, step func(i int)) {
	t.Helper()
	deadline := time.After(total)
	tick := time.NewTicker(repeatEvery)
	defer tick.Stop()
	for i := 0; ; i++ {
		step(i)
		select {
		case <-p.done:
			return
		case <-deadline:
			t.Fatalf("cotal %s: no exit within %s\nstdout: %s\nstderr: %s", strings.Join(p.args, " "), total, p.stdout, p.stderr)
		case <-tick.C:
		}
	}
}

// mustCotal runs cotal and requires exit 0; it returns stdout.
func mustCotal(t testing.TB, home string, args ...string) string {
	t.Helper()
	stdout, stderr, code := runCotal(t, home, args...)
	if code != 0 {
		t.Fatalf("cotal %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// mintedID is the part of `cotal mint --json` these tests read.
type mintedID struct {
	Creds        string `json:"creds"`
	LifecycleUID string `json:"lifecycleUid"`
}

// mint mints name on the running mesh of home with the extra mint flags.
func mint(t testing.TB, home, name string, flags ...string) mintedID {
	t.Helper()
	stdout := mustCotal(t, home, append([]string{"mint", name, "--json"}, flags...)...)
	var m mintedID
	if err := json.Unmarshal([]byte(stdout), &m); err != nil || m.Creds == "" {
		t.Fatalf("mint %s --json: %v\n%s", name, err, stdout)
	}
	return m
}

// inboxItem is the part of one `cotal inbox --json` item these tests read.
type inboxItem struct {
	Kind    string `json:"kind"`
	Message struct {
		From struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"from"`
		Channel string `json:"channel"`
		Parts   []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"message"`
}

func (it inboxItem) text() string {
	var texts []string
	for _, p := range it.Message.Parts {
		if p.Kind == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func parseInbox(t *testing.T, stdout string) []inboxItem {
	t.Helper()
	var items []inboxItem
	if err := json.Unmarshal([]byte(stdout), &items); err != nil {
		t.Fatalf("inbox --json: %v\n%s", err, stdout)
	}
	return items
}

// rosterStatus is name's status in `cotal roster --json`, "" when the
// roster does not list the name.
func rosterStatus(t *testing.T, home, name string) (string, error) {
	t.Helper()
	st, _, err := rosterOffline(t, home, name)
	return st, err
}

// rosterOffline is name's roster status and, when offline, why.
func rosterOffline(t *testing.T, home, name string) (status, reason string, err error) {
	t.Helper()
	stdout, stderr, code := runCotal(t, home, "roster", "--json")
	if code != 0 {
		return "", "", fmt.Errorf("roster --json: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var r struct {
		Peers []struct {
			Name          string `json:"name"`
			Status        string `json:"status"`
			OfflineReason string `json:"offlineReason"`
		} `json:"peers"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		return "", "", fmt.Errorf("roster --json: %v\n%s", err, stdout)
	}
	for _, p := range r.Peers {
		if p.Name == name {
			return p.Status, p.OfflineReason, nil
		}
	}
	return "", "", nil
}

var (
	dmReceipt  = regexp.MustCompile(`^DM to (\w+): stored seq \d+; recipient offline at send; delivery not confirmed\n$`)
	askReceipt = regexp.MustCompile(`^asked @reviewer: stored seq \d+; no @reviewer holder online at send, it waits in the queue; delivery not confirmed\n$`)
)

const emptyInbox = "Inbox empty, no new messages.\n"

func TestTwoIdentitiesExchangeDMPostAndTask(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	alice := mint(t, home, "alice", "--subscribe", "team", "--allow-publish", "team", "--role", "reviewer")
	bob := mint(t, home, "bob", "--subscribe", "team", "--allow-publish", "team")

	// A channel post reaches a one-shot inbox only while it listens, and
	// its subscription starts a little after the process does: post
	// until the listener has caught one. Its durable queues are empty
	// yet, so only a post can end its wait.
	listen := startCotal(t, home, "--creds", alice.Creds, "inbox", "--wait", "10s", "--json")
	repeatUntilExit(t, listen, 15*time.Second, func(i int) {
		mustCotal(t, home, "--creds", bob.Creds, "send", "msg", "team", fmt.Sprintf("post-%d", i))
	})
	if code := listen.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("waiting inbox: exit %d\nstdout: %s\nstderr: %s", code, listen.stdout, listen.stderr)
	}
	posts := parseInbox(t, listen.stdout.String())
	if len(posts) == 0 {
		t.Fatalf("waiting inbox caught nothing:\n%s", listen.stdout)
	}
	for _, it := range posts {
		if it.Kind != "channel" || it.Message.From.ID != "local.bob" || it.Message.Channel != "team" || !strings.HasPrefix(it.text(), "post-") {
			t.Errorf("waiting inbox item %+v: want a channel post on #team from local.bob with text post-N", it)
		}
	}

	stdout := mustCotal(t, home, "--creds", bob.Creds, "send", "dm", "alice", "hi-alice")
	if m := dmReceipt.FindStringSubmatch(stdout); m == nil || m[1] != "alice" {
		t.Errorf("send dm alice: %q; want `DM to alice: stored seq N; recipient offline at send; delivery not confirmed`", stdout)
	}
	stdout = mustCotal(t, home, "--creds", bob.Creds, "send", "ask", "reviewer", "task-1")
	if !askReceipt.MatchString(stdout) {
		t.Errorf("send ask reviewer: %q; want the stored seq and that the task waits in the queue", stdout)
	}

	items := parseInbox(t, mustCotal(t, home, "--creds", alice.Creds, "inbox", "--json"))
	type got struct{ kind, from, text string }
	var gotItems []got
	for _, it := range items {
		// A post bob made while the waiting inbox was already on its way
		// out is a stored copy for alice (#team is durable): it comes
		// after the directed items.
		if it.Kind == "channel" && it.Message.From.ID == "local.bob" && strings.HasPrefix(it.text(), "post-") && len(gotItems) == 2 {
			continue
		}
		gotItems = append(gotItems, got{it.Kind, it.Message.From.ID, it.text()})
	}
	wantItems := []got{{"dm", "local.bob", "hi-alice"}, {"anycast", "local.bob", "task-1"}}
	if fmt.Sprint(gotItems) != fmt.Sprint(wantItems) {
		t.Errorf("alice's inbox --json: %v; want %v (the DM, then the task)", gotItems, wantItems)
	}
	if stdout := mustCotal(t, home, "--creds", alice.Creds, "inbox"); stdout != emptyInbox {
		t.Errorf("alice's second inbox: %q; want %q", stdout, emptyInbox)
	}

	stdout = mustCotal(t, home, "--creds", alice.Creds, "send", "dm", "bob", "hi-bob")
	if m := dmReceipt.FindStringSubmatch(stdout); m == nil || m[1] != "bob" {
		t.Errorf("alice's send dm bob: %q; want `DM to bob: stored seq N; recipient offline at send; delivery not confirmed`", stdout)
	}
	if stdout := mustCotal(t, home, "--creds", bob.Creds, "inbox"); stdout != "[DM from alice/reviewer] hi-bob\n" {
		t.Errorf("bob's inbox: %q; want the DM from alice/reviewer", stdout)
	}
}

func TestOfflineDMArrivesExactlyOnce(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	carol := mint(t, home, "carol")
	bob := mint(t, home, "bob")

	stdout := mustCotal(t, home, "--creds", bob.Creds, "send", "dm", "carol", "before-you-came")
	if m := dmReceipt.FindStringSubmatch(stdout); m == nil || m[1] != "carol" {
		t.Errorf("send dm carol: %q; want a receipt saying carol was offline", stdout)
	}
	const first = "[DM from bob] before-you-came\n"
	if stdout := mustCotal(t, home, "--creds", carol.Creds, "inbox"); stdout != first {
		t.Errorf("carol's first inbox: %q; want %q", stdout, first)
	}
	if stdout := mustCotal(t, home, "--creds", carol.Creds, "inbox"); stdout != emptyInbox {
		t.Errorf("carol's second inbox: %q; want %q (the DM was acked)", stdout, emptyInbox)
	}

	// A peek acks nothing: the DM comes again, once, to the next inbox.
	mustCotal(t, home, "--creds", bob.Creds, "send", "dm", "carol", "peeked")
	const peeked = "[DM from bob] peeked\n"
	for _, args := range [][]string{{"inbox", "--peek"}, {"inbox"}} {
		if stdout := mustCotal(t, home, append([]string{"--creds", carol.Creds}, args...)...); stdout != peeked {
			t.Errorf("carol's %s: %q; want %q", strings.Join(args, " "), stdout, peeked)
		}
	}
	if stdout := mustCotal(t, home, "--creds", carol.Creds, "inbox"); stdout != emptyInbox {
		t.Errorf("carol's inbox after the peeked DM was shown: %q; want %q", stdout, emptyInbox)
	}
}

func TestForgedSenderDroppedAndCounted(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	// A live channel: the forgery reaches dave's own receive pipeline,
	// where it must be dropped and counted. (On a durable channel the
	// delivery service drops it before any copy is stored.)
	mustCotal(t, home, "channels", "set", "team", "--class", "live")
	mallory := mint(t, home, "mallory", "--subscribe", "team", "--allow-publish", "team")
	dave := mint(t, home, "dave", "--subscribe", "team")
	st, code := statusJSON(t, home)
	if code != 0 || st.URL == "" {
		t.Fatalf("status --json: exit %d, %+v", code, st)
	}

	nc, err := nats.Connect(st.URL,
		nats.UserCredentials(mallory.Creds),
		nats.CustomInboxPrefix("_INBOX_local-mallory-"+mallory.LifecycleUID),
		nats.Timeout(5*time.Second), nats.MaxReconnects(0))
	if err != nil {
		t.Fatalf("connecting as mallory: %v", err)
	}
	defer nc.Close()
	forge := func(i int) {
		t.Helper()
		// Mallory may publish only on her own subject, so the broker lets
		// this through; only the receiver can see that from.id lies.
		body, err := json.Marshal(map[string]any{
			"id":      fmt.Sprintf("forged-%d-%d", time.Now().UnixNano(), i),
			"ts":      time.Now().UnixMilli(),
			"space":   "default",
			"from":    map[string]string{"id": "local.bob", "name": "bob"},
			"channel": "team",
			"parts":   []map[string]string{{"kind": "text", "text": "forged"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := testmesh.Publish(nc, 10*time.Second, &nats.Msg{Subject: "cotal.default.chat.local.mallory.team", Data: body}); err != nil {
			t.Fatalf("mallory's forged publish on her own subject: %v", err)
		}
	}

	listen := startCotal(t, home, "--creds", dave.Creds, "inbox", "--wait", "8s")
	// The inbox says it waits only once it has joined #team, so from here
	// on the forged post reaches it before the genuine one.
	listen.waitStderr(t, 10*time.Second, "waiting up to 8s for messages...")
	repeatUntilExit(t, listen, 15*time.Second, func(i int) {
		forge(i)
		mustCotal(t, home, "--creds", mallory.Creds, "send", "msg", "team", "genuine")
	})
	if code := listen.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("dave's inbox: exit %d\nstdout: %s\nstderr: %s", code, listen.stdout, listen.stderr)
	}
	stdout, stderr := listen.stdout.String(), listen.stderr.String()
	if !strings.Contains(stdout, "[#team mallory] genuine") || strings.Contains(stdout, "forged") {
		t.Errorf("dave's inbox printed %q; want mallory's genuine post and nothing forged", stdout)
	}
	if !strings.Contains(stderr, "dropped") || !strings.Contains(stderr, "sender-mismatch") {
		t.Errorf("dave's inbox stderr %q; want the forged post counted as dropped (sender-mismatch)", stderr)
	}
}

func TestJoinIsAnInteractivePresence(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	bob := mint(t, home, "bob", "--subscribe", "team")

	erin := startCotal(t, home, "join", "--name", "erin", "--channel", "team")
	waitFor(t, 15*time.Second, func() error {
		if erin.exited() {
			t.Fatalf("join exited before erin was on the roster\nstdout: %s\nstderr: %s", erin.stdout, erin.stderr)
		}
		st, err := rosterStatus(t, home, "erin")
		if err == nil && st != "idle" {
			err = fmt.Errorf("erin's roster status is %q, want idle", st)
		}
		return err
	})

	mustCotal(t, home, "send", "dm", "erin", "ping")
	dmFrom := regexp.MustCompile(`(?m)^\[DM from [^\]]+\] ping$`)
	waitFor(t, 10*time.Second, func() error {
		if !dmFrom.MatchString(erin.stdout.String()) {
			return fmt.Errorf("erin has not printed the DM yet:\n%s", erin.stdout)
		}
		return nil
	})

	// Bob's inbox says it waits once it has joined #team; erin's line
	// goes out after that, and again until bob's inbox has caught it.
	listen := startCotal(t, home, "--creds", bob.Creds, "inbox", "--wait", "8s")
	listen.waitStderr(t, 10*time.Second, "waiting up to 8s for messages...")
	repeatUntilExit(t, listen, 15*time.Second, func(int) {
		if _, err := io.WriteString(erin.stdin, "hello team\n"); err != nil {
			t.Fatalf("writing to join's stdin: %v", err)
		}
	})
	if code := listen.wait(t, 5*time.Second); code != 0 || !strings.Contains(listen.stdout.String(), "[#team erin] hello team") {
		t.Errorf("bob's inbox: exit %d, stdout %q, stderr %q; want erin's post on #team", code, listen.stdout, listen.stderr)
	}

	if _, err := io.WriteString(erin.stdin, "/quit\n"); err != nil {
		t.Fatalf("writing /quit: %v", err)
	}
	if code := erin.wait(t, 10*time.Second); code != 0 {
		t.Errorf("join after /quit: exit %d\nstdout: %s\nstderr: %s", code, erin.stdout, erin.stderr)
	}
	waitFor(t, 10*time.Second, func() error {
		st, err := rosterStatus(t, home, "erin")
		if err == nil && st != "offline" {
			err = fmt.Errorf("erin's roster status is %q, want offline", st)
		}
		return err
	})
}

func TestSendRefusals(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	bob := mint(t, home, "bob", "--subscribe", "team", "--allow-publish", "team")

	tests := []struct {
		name string
		args []string
		code int
		want string // what the one-line message must say
	}{
		{name: "wildcard channel", args: []string{"send", "msg", "team.>", "x"}, code: 2, want: `cannot publish to wildcard channel "team.>"`},
		{name: "outside allowPublish", args: []string{"--creds", bob.Creds, "send", "msg", "other", "x"}, code: 1, want: "not allowed to post to #other"},
		{name: "unknown peer", args: []string{"send", "dm", "nobody", "x"}, code: 2, want: `no peer "nobody" in space "default"`},
		{name: "dm without text", args: []string{"send", "dm", "bob"}, code: 2, want: "send dm: missing <text>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runCotal(t, home, tc.args...)
			msg := strings.TrimSuffix(stderr, "\n")
			if code != tc.code || stdout != "" || !strings.HasPrefix(msg, "cotal: ") || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("cotal %s: exit %d, stdout %q, stderr %q; want exit %d, no output and one line `cotal: ...` saying %s",
					strings.Join(tc.args, " "), code, stdout, stderr, tc.code, tc.want)
			}
		})
	}
}
