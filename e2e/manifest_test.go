package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// meshFile is a manifest of three agents and two channels: lead and coder
// are shell seats, bot an endpoint (a credential only). lead posts on
// general; coder reads general and posts on review without reading it;
// bot reads and posts on review.
const meshFile = `apiVersion: cotal/v1
kind: Mesh
space: mf
agents:
  lead:
    agent: command
    command: sh
  coder:
    agent: command
    command: sh
  bot:
    kind: endpoint
channels:
  general:
    description: the whole team
    subscribe: [lead, coder]
    allowPublish: [lead]
  review:
    allowSubscribe: [bot]
    allowPublish: [bot, coder]
`

func writeManifest(t *testing.T, dir, body string) string {
	t.Helper()
	path := filepath.Join(dir, "cotal.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// upFile runs `cotal up -f` in dir and requires exit 0.
func upFile(t *testing.T, home, dir string, args ...string) string {
	t.Helper()
	out, stderr, code := runIn2(t, home, dir, "mf", append([]string{"up", "-f", "cotal.yaml"}, args...)...)
	if code != 0 {
		t.Fatalf("up -f %v: exit %d\n%s%s", args, code, out, stderr)
	}
	return out
}

// raw is one credential on a bare nats.go connection, keeping what the
// broker refused it.
type raw struct {
	t       *testing.T
	nc      *nats.Conn
	mu      sync.Mutex
	refused []string
}

func dialRaw(t *testing.T, url, creds string) (*raw, error) {
	r := &raw{t: t}
	nc, err := nats.Connect(url, nats.UserCredentials(creds), nats.Timeout(5*time.Second), nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			r.mu.Lock()
			r.refused = append(r.refused, strings.ToLower(err.Error()))
			r.mu.Unlock()
		}))
	if err != nil {
		return nil, err
	}
	r.nc = nc
	t.Cleanup(nc.Close)
	return r, nil
}

func (r *raw) wasRefused(op, subject string) {
	r.t.Helper()
	want := strings.ToLower(fmt.Sprintf("permissions violation for %s to %q", op, subject))
	waitFor(r.t, 10*time.Second, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, e := range r.refused {
			if strings.Contains(e, want) {
				return nil
			}
		}
		return fmt.Errorf("no refusal of %s on %s (so far %v)", op, subject, r.refused)
	})
}

func (r *raw) notRefused() {
	r.t.Helper()
	if err := r.nc.Flush(); err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.refused) > 0 {
		r.t.Fatalf("refused: %v", r.refused)
	}
}

// seatCreds is the creds file of the one live lifecycle of seat name.
func seatCreds(t *testing.T, home, name string) string {
	t.Helper()
	var path string
	waitFor(t, 10*time.Second, func() error {
		m, _ := filepath.Glob(filepath.Join(home, "spaces", "mf", "run", "seats", name+"-*", "seat.creds"))
		if len(m) != 1 {
			return fmt.Errorf("%d creds files of seat %s: %v", len(m), name, m)
		}
		path = m[0]
		return nil
	})
	return path
}

// keep copies a creds file aside, as someone who read it once would.
func keep(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(filepath.Dir(path))+".creds")
	if err := os.WriteFile(out, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

func chat(actor, channel string) string { return "cotal.mf.chat.local." + actor + "." + channel }

// The file's rights are the broker's: each agent reads and posts where
// the file says and is refused the rest, on a bare connection. A narrowed
// ACL re-mints exactly that agent, and its old credential is refused.
func TestManifestRightsAreTheBrokers(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	writeManifest(t, dir, meshFile)
	t.Cleanup(func() { runIn2(t, home, dir, "mf", "down", "--with-agents") })
	out := upFile(t, home, dir)
	if !strings.Contains(out, "spawn lead") || !strings.Contains(out, "mint bot") {
		t.Fatalf("up -f said:\n%s", out)
	}
	url := readBrokerJSON(t, filepath.Join(home, "spaces", "mf")).URL
	leadCreds, coderCreds := seatCreds(t, home, "lead"), seatCreds(t, home, "coder")
	botCreds := filepath.Join(home, "spaces", "mf", "auth", "creds", "bot.creds")

	lead, err := dialRaw(t, url, leadCreds)
	if err != nil {
		t.Fatal(err)
	}
	coder, err := dialRaw(t, url, coderCreds)
	if err != nil {
		t.Fatal(err)
	}
	bot, err := dialRaw(t, url, botCreds)
	if err != nil {
		t.Fatal(err)
	}
	// What the file grants works: coder hears lead on general, bot hears
	// coder on review.
	onGeneral, err := coder.nc.SubscribeSync("cotal.mf.chat.*.*.general")
	if err != nil {
		t.Fatal(err)
	}
	onReview, err := bot.nc.SubscribeSync("cotal.mf.chat.*.*.review")
	if err != nil {
		t.Fatal(err)
	}
	coder.notRefused()
	bot.notRefused()
	if err := lead.nc.Publish(chat("lead", "general"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if m, err := onGeneral.NextMsg(10 * time.Second); err != nil || m.Subject != chat("lead", "general") {
		t.Fatalf("coder did not hear lead on general: %v", err)
	}
	if err := coder.nc.Publish(chat("coder", "review"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if m, err := onReview.NextMsg(10 * time.Second); err != nil || m.Subject != chat("coder", "review") {
		t.Fatalf("bot did not hear coder on review: %v", err)
	}
	lead.notRefused()
	coder.notRefused()
	// What it does not grant the broker refuses.
	_ = lead.nc.Publish(chat("lead", "review"), []byte(`{}`))
	lead.wasRefused("publish", chat("lead", "review"))
	_, _ = lead.nc.SubscribeSync("cotal.mf.chat.*.*.review")
	lead.wasRefused("subscription", "cotal.mf.chat.*.*.review")
	_ = coder.nc.Publish(chat("coder", "general"), []byte(`{}`))
	coder.wasRefused("publish", chat("coder", "general"))
	_, _ = coder.nc.SubscribeSync("cotal.mf.chat.*.*.review")
	coder.wasRefused("subscription", "cotal.mf.chat.*.*.review")
	_ = bot.nc.Publish(chat("bot", "general"), []byte(`{}`))
	bot.wasRefused("publish", chat("bot", "general"))
	_ = bot.nc.Publish(chat("lead", "review"), []byte(`{}`)) // as another
	bot.wasRefused("publish", chat("lead", "review"))

	oldCoder, oldLead, oldBot := keep(t, coderCreds), keep(t, leadCreds), keep(t, botCreds)
	// No seat runs with an endpoint's rights.
	if out, stderr, code := runIn2(t, home, dir, "mf", "spawn", "bot"); code == 0 || !strings.Contains(stderr, "bot is an endpoint of the space's manifest") {
		t.Fatalf("spawn of the endpoint bot: exit %d\n%s%s", code, out, stderr)
	}
	// Narrow coder: it may no longer post on review, nor read general.
	// Only coder is re-minted.
	narrowed := strings.Replace(meshFile, "allowPublish: [bot, coder]", "allowPublish: [bot]", 1)
	writeManifest(t, dir, strings.Replace(narrowed, "subscribe: [lead, coder]", "subscribe: [lead]", 1))
	var res struct {
		Outcome struct {
			Done []struct {
				Action string   `json:"action"`
				Agent  string   `json:"agent"`
				Seats  []string `json:"seats"`
			} `json:"done"`
		} `json:"outcome"`
	}
	jout, stderr, code := runIn2(t, home, dir, "mf", "up", "-f", "cotal.yaml", "--json")
	if code != 0 || json.Unmarshal([]byte(jout), &res) != nil {
		t.Fatalf("up -f --json: exit %d\n%s%s", code, jout, stderr)
	}
	if d := res.Outcome.Done; len(d) != 1 || d[0].Action != "remint" || d[0].Agent != "coder" {
		t.Fatalf("the second up -f did %+v, want only a re-mint of coder", d)
	}
	waitFor(t, 10*time.Second, func() error {
		if coder.nc.IsConnected() {
			return errors.New("coder's old connection is still up")
		}
		return nil
	})
	if nc, err := dialAgent(url, oldCoder); err == nil {
		nc.Close()
		t.Fatal("coder's old credential still connects")
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("old credential refused for another reason: %v", err)
	}
	coder2, err := dialRaw(t, url, seatCreds(t, home, "coder"))
	if err != nil {
		t.Fatal(err)
	}
	_ = coder2.nc.Publish(chat("coder", "review"), []byte(`{}`))
	coder2.wasRefused("publish", chat("coder", "review"))
	_, _ = coder2.nc.SubscribeSync("cotal.mf.chat.*.*.general")
	coder2.wasRefused("subscription", "cotal.mf.chat.*.*.general")
	// lead and bot kept their credentials and their connections.
	for name, c := range map[string]string{"lead": oldLead, "bot": oldBot} {
		nc, err := dialAgent(url, c)
		if err != nil {
			t.Fatalf("%s's credential was revoked though its rights did not change: %v", name, err)
		}
		nc.Close()
	}
	if !lead.nc.IsConnected() || !bot.nc.IsConnected() {
		t.Fatal("an unchanged agent's connection was closed")
	}
	// down -f stops what the file started, and the mesh it started.
	out, stderr, code = runIn2(t, home, dir, "mf", "down", "-f", "cotal.yaml")
	if code != 0 || !strings.Contains(out, "mesh mf stopped") {
		t.Fatalf("down -f: exit %d\n%s%s", code, out, stderr)
	}
	if nc, err := dialAgent(url, oldBot); err == nil {
		nc.Close()
		t.Fatal("bot's credential still connects after down -f")
	}
}

// plan on a running mesh prints the difference and changes nothing: the
// seats keep their processes and credentials, and what was applied stays.
func TestPlanOnARunningMeshChangesNothing(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	writeManifest(t, dir, meshFile)
	t.Cleanup(func() { runIn2(t, home, dir, "mf", "down", "--with-agents") })
	upFile(t, home, dir)
	state := filepath.Join(home, "spaces", "mf", "auth", "manifest.json")
	before, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	leadCreds := seatCreds(t, home, "lead")
	psBefore, _, _ := runIn2(t, home, dir, "mf", "ps", "--json")

	changed := strings.Replace(meshFile, "allowPublish: [lead]", "allowPublish: [lead, coder]", 1)
	changed = strings.Replace(changed, "  bot:\n    kind: endpoint\n", "  bot:\n    kind: endpoint\n  extra:\n    agent: command\n    command: sh\n", 1)
	writeManifest(t, dir, strings.Replace(changed, "    command: sh\n  coder:", "    command: bash\n  coder:", 1))
	out, stderr, code := runIn2(t, home, dir, "mf", "plan")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"re-mint coder (coder): rights changed",
		"allowPublish: [review] -> [general, review]",
		`restart lead (lead): launch changed [only with --apply]`,
		`command: "sh" -> "bash"`,
		"spawn extra (extra): new agent",
		"unchanged: bot",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan does not say %q:\n%s", want, out)
		}
	}
	var plan struct {
		Steps []struct {
			Action string `json:"action"`
			Needs  string `json:"needs"`
		} `json:"steps"`
	}
	jout, _, code := runIn2(t, home, dir, "mf", "plan", "--json")
	if code != 0 || json.Unmarshal([]byte(jout), &plan) != nil || len(plan.Steps) != 3 {
		t.Fatalf("plan --json: exit %d\n%s", code, jout)
	}
	// topology sets the file beside the credentials the mesh holds.
	var topo struct {
		Rows []struct {
			Who   string `json:"who"`
			State string `json:"state"`
		} `json:"rows"`
	}
	jout, _, code = runIn2(t, home, dir, "mf", "topology", "--json")
	if code != 0 || json.Unmarshal([]byte(jout), &topo) != nil {
		t.Fatalf("topology --json: exit %d\n%s", code, jout)
	}
	if got := fmt.Sprint(topo.Rows); got != "[{bot same} {coder differs} {extra not running} {lead same}]" {
		t.Errorf("topology: %s", got)
	}
	after, _ := os.ReadFile(state)
	if string(after) != string(before) {
		t.Fatal("plan changed what was applied")
	}
	if psAfter, _, _ := runIn2(t, home, dir, "mf", "ps", "--json"); seatPIDs(t, psAfter) != seatPIDs(t, psBefore) {
		t.Fatalf("plan changed the seats:\n%s\n%s", psBefore, psAfter)
	}
	if got := seatCreds(t, home, "lead"); got != leadCreds {
		t.Fatalf("lead's credential changed: %s -> %s", leadCreds, got)
	}
	// Without --apply (and no terminal to ask) the launch change waits.
	out = upFile(t, home, dir)
	if !strings.Contains(out, "waiting: restart lead") || seatCreds(t, home, "lead") != leadCreds {
		t.Fatalf("up -f without --apply restarted lead:\n%s", out)
	}
	out = upFile(t, home, dir, "--apply")
	if !strings.Contains(out, "restart lead (lead): launch changed: done") || seatCreds(t, home, "lead") == leadCreds {
		t.Fatalf("up -f --apply did not restart lead:\n%s", out)
	}
}

// seatPIDs is the names and PIDs of `ps --json`'s rows, in order.
func seatPIDs(t *testing.T, psJSON string) string {
	t.Helper()
	var cs struct {
		Rows []struct {
			Name string `json:"name"`
			PID  int    `json:"pid"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(psJSON), &cs); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, psJSON)
	}
	return fmt.Sprint(cs.Rows)
}

// A bad file starts nothing: every refusal names its line and column,
// exits 2, and leaves no mesh and no store behind.
func TestManifestBadFileStartsNothing(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	cases := map[string]struct{ body, where string }{
		"unknown key":  {strings.Replace(meshFile, "description:", "descripton:", 1), ":15:5:"},
		"duplicate":    {strings.Replace(meshFile, "  bot:\n", "  bot:\n    kind: endpoint\n  bot:\n", 1), ":13:3:"},
		"wildcard":     {strings.Replace(meshFile, "  review:\n", "  review.*:\n", 1), ":18:3:"},
		"no such name": {strings.Replace(meshFile, "allowPublish: [lead]", "allowPublish: [lead, ghost]", 1), ":17:26:"},
		"wrong type":   {strings.Replace(meshFile, "  bot:\n    kind: endpoint\n", "  bot:\n    kind: endpoint\n    capabilities: spawn\n", 1), ":13:19:"},
	}
	for name, c := range cases {
		writeManifest(t, dir, c.body)
		for _, cmd := range [][]string{{"up", "-f", "cotal.yaml"}, {"plan", "-f", "cotal.yaml"}} {
			out, stderr, code := runIn2(t, home, dir, "mf", cmd...)
			if code != 2 || !strings.Contains(stderr, filepath.Join(dir, "cotal.yaml")+c.where) || !strings.Contains(stderr, "nothing was started") {
				t.Errorf("%s: %v: exit %d\nstdout: %s\nstderr: %s", name, cmd, code, out, stderr)
			}
		}
	}
	// The manifest's flags without a manifest, or on the dashboard.
	for _, args := range [][]string{{"up", "--prune"}, {"up", "--apply"}, {"-f", "cotal.yaml"}} {
		if out, stderr, code := runIn2(t, home, dir, "mf", args...); code != 2 || !strings.Contains(stderr, "-f") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "spaces", "mf")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused file left a store: %v", err)
	}
}

// init writes a starter the reader takes as it is, never over a file
// that exists.
func TestInitWritesAStarterThatPlans(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), filepath.Join(t.TempDir(), "web-app")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCotalIn(t, home, dir, "init")
	if code != 0 || !strings.Contains(out, "created "+filepath.Join(dir, "cotal.yaml")) || !strings.Contains(out, "created "+filepath.Join(dir, ".cotal", "agents", "lead.md")) {
		t.Fatalf("init: exit %d\n%s%s", code, out, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, ".cotal", "agents", "lead.md"), []byte("---\nname: lead\nagent: command\ncommand: sh\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = runCotalIn(t, home, dir, "init")
	if code != 0 || strings.Count(out, "kept ") != 2 {
		t.Fatalf("init again: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runCotalIn(t, home, dir, "plan")
	if code != 0 || !strings.Contains(out, "plan for space web-app") || !strings.Contains(out, "spawn lead (lead): new agent") {
		t.Fatalf("plan of the starter: exit %d\n%s%s", code, out, stderr)
	}
	if ents, err := os.ReadDir(home); err != nil || len(ents) != 0 {
		t.Fatalf("plan with no mesh running wrote into the data dir: %v %v", ents, err)
	}
}

// runCotalIn runs cotal from dir with nothing naming the space.
func runCotalIn(t *testing.T, home, dir string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cotalBin, args...)
	cmd.Env, cmd.Dir, cmd.WaitDelay = cotalEnv(home), dir, 5*time.Second
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("cotal %v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

// The dashboard marks the seats the manifest declares, and names a
// declared one that does not run.
func TestDashboardMarksDeclaredSeats(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	writeManifest(t, dir, meshFile)
	t.Cleanup(func() { runIn2(t, home, dir, "mf", "down", "--with-agents") })
	upFile(t, home, dir)
	d := startClient(t, home, dir, 140, 40, "--space", "mf")
	d.waitLine(`●◆.?coder\s`)
	d.waitLine(`●◆.?lead\s`)
	if out, stderr, code := runIn2(t, home, dir, "mf", "stop", "coder"); code != 0 {
		t.Fatalf("stop coder: exit %d\n%s%s", code, out, stderr)
	}
	d.waitScreen("declared, not running: coder")
	d.quit()
}

// An agent the file no longer names keeps running until --prune, and
// down -f stops what the file started and nothing else: a seat spawned by
// hand keeps running, and with it the mesh.
func TestUpFilePrunesOnlyWhenToldAndDownStopsOnlyItsOwn(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	agents := filepath.Join(dir, ".cotal", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "byhand.md"), []byte("---\nname: byhand\nagent: command\ncommand: sh\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeManifest(t, dir, meshFile)
	t.Cleanup(func() { runIn2(t, home, dir, "mf", "down", "--with-agents") })
	upFile(t, home, dir)
	if out, stderr, code := runIn2(t, home, dir, "mf", "spawn", "byhand"); code != 0 {
		t.Fatalf("spawn byhand: exit %d\n%s%s", code, out, stderr)
	}
	leadCreds := keep(t, seatCreds(t, home, "lead"))
	writeManifest(t, dir, strings.Replace(strings.Replace(meshFile, "  lead:\n    agent: command\n    command: sh\n", "", 1), "[lead, coder]", "[coder]", 1))
	// lead is still named by general's allowPublish: the file is refused.
	if _, stderr, code := runIn2(t, home, dir, "mf", "up", "-f", "cotal.yaml"); code != 2 || !strings.Contains(stderr, `"lead" is not an agent of this manifest`) {
		t.Fatalf("a list naming a removed agent: exit %d\n%s", code, stderr)
	}
	writeManifest(t, dir, strings.Replace(strings.Replace(strings.Replace(meshFile, "  lead:\n    agent: command\n    command: sh\n", "", 1), "[lead, coder]", "[coder]", 1), "allowPublish: [lead]", "allowPublish: []", 1))
	out := upFile(t, home, dir)
	if !strings.Contains(out, "waiting: remove lead: stop lead: no longer in the file [only with --prune]") {
		t.Fatalf("up -f without --prune:\n%s", out)
	}
	if nc, err := dialAgent(readBrokerJSON(t, filepath.Join(home, "spaces", "mf")).URL, leadCreds); err != nil {
		t.Fatalf("lead was stopped without --prune: %v", err)
	} else {
		nc.Close()
	}
	out = upFile(t, home, dir, "--prune")
	if !strings.Contains(out, "remove lead: stop lead: no longer in the file: done") {
		t.Fatalf("up -f --prune:\n%s", out)
	}
	ps, _, _ := runIn2(t, home, dir, "mf", "ps", "--json")
	var cs struct {
		Rows []struct {
			Name    string `json:"name"`
			Process string `json:"process"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(ps), &cs); err != nil {
		t.Fatal(err)
	}
	for _, r := range cs.Rows {
		if r.Name == "lead" && r.Process == "running" {
			t.Fatalf("lead still runs after --prune: %s", ps)
		}
	}
	out, stderr, code := runIn2(t, home, dir, "mf", "down", "-f", ".") // a folder names its cotal.yaml
	if code != 0 || !strings.Contains(out, "stopped coder") || !strings.Contains(out, "mesh mf keeps running: 1 seat(s) the file did not start still run: byhand") {
		t.Fatalf("down -f: exit %d\n%s%s", code, out, stderr)
	}
	ps, _, _ = runIn2(t, home, dir, "mf", "ps")
	if !strings.Contains(ps, "byhand") || !strings.Contains(ps, "running") {
		t.Fatalf("down -f touched a seat it did not start:\n%s", ps)
	}
}

// The rights of a declared seat are the applied file's, whatever its agent
// file says: a persona file granting every channel grants nothing under
// the manifest, and spawning the seat again by hand gives it no more.
func TestDeclaredSeatTakesTheFilesRightsNotItsAgentFiles(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	agents := filepath.Join(dir, ".cotal", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "worker.md"), []byte("---\nname: worker\nagent: command\ncommand: sh\nallowSubscribe: [\">\"]\nallowPublish: [\">\"]\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeManifest(t, dir, "apiVersion: cotal/v1\nkind: Mesh\nspace: mf\nagents:\n  worker: worker\nchannels:\n  general:\n    subscribe: [worker]\n")
	t.Cleanup(func() { runIn2(t, home, dir, "mf", "down", "--with-agents") })
	if out := upFile(t, home, dir); !strings.Contains(out, "note: worker: the channel lists of") {
		t.Fatalf("up -f does not say the agent file's lists are not used:\n%s", out)
	}
	url := readBrokerJSON(t, filepath.Join(home, "spaces", "mf")).URL
	check := func(when string) {
		t.Helper()
		w, err := dialRaw(t, url, seatCreds(t, home, "worker"))
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		_ = w.nc.Publish(chat("worker", "general"), []byte(`{}`))
		w.wasRefused("publish", chat("worker", "general"))
		_, _ = w.nc.SubscribeSync("cotal.mf.chat.*.*.secret")
		w.wasRefused("subscription", "cotal.mf.chat.*.*.secret")
	}
	check("after up -f")
	for _, args := range [][]string{{"stop", "worker"}, {"spawn", "--name", "worker", "worker"}} {
		if out, stderr, code := runIn2(t, home, dir, "mf", args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	check("spawned again by hand")
}
