package clirun

import (
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/client"
)

// TestBadInputIsRefusedBeforeAnythingConnects: each flow refuses input it
// cannot act on as a UsageError (exit 2) before it looks for a mesh; the
// space named here has none, so reaching for one would fail otherwise.
func TestBadInputIsRefusedBeforeAnythingConnects(t *testing.T) {
	t.Setenv("COTAL_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	c := Caller{Space: "nomesh", StoreDir: t.TempDir()}
	agent := c
	agent.Creds = "agent.creds"
	read := false // a send refused for its flags reads no standard input
	body := func() (string, error) { read = true; return "hello", nil }
	send := SendRequest{Kind: wire.KindDM, To: "ana", Timeout: time.Second, Body: body, Cmd: "send dm"}
	withWait, noTimeout, badID := send, send, send
	withWait.Wait = "delivered"
	noTimeout.Timeout = 0
	badID.ID = "no spaces"
	if _, err := History(c, "team", 10); err == nil || cliargs.IsUsage(err) {
		t.Fatalf("good input with no mesh: %v, want a failure that is not bad input (or every case below passes unseen)", err)
	}
	if _, err := Type(c, "shell", "", []string{"ls"}, false, true); err == nil || cliargs.IsUsage(err) {
		t.Fatalf("a seat call with good input and no mesh: %v, want a failure that is not bad input", err)
	}
	t.Setenv(tty.DetachKeyEnv, "ctrl-m")
	_, attachErr := Attach(t.Context(), c, "", tty.Options{Name: "shell"})
	show := func(client.ScreenReply) {}
	flagged := []error{second(Send(c, withWait)), second(Send(c, noTimeout))}
	if read {
		t.Error("a send refused for its flags read its body")
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"send --wait not a rung", flagged[0]},
		{"send --timeout 0", flagged[1]},
		{"send --id with spaces", second(Send(c, badID))},
		{"history of a pattern", second(History(c, "team.*", 10))},
		{"history --limit 0", second(History(c, "team", 0))},
		{"history limit --max-age -1s", second(ChatLimit(c, -time.Second, true, 0, false))},
		{"history limit --max-per-sender 0", second(ChatLimit(c, 0, false, 0, true))},
		{"history limit --max-age 10ms", second(ChatLimit(c, 10*time.Millisecond, true, 0, false))},
		{"channels set of a pattern", second(SetChannel(c, "team.>", ChannelFlags{Replay: "on"}))},
		{"channels set with nothing", second(SetChannel(c, "team", ChannelFlags{}))},
		{"channels set --replay maybe", second(SetChannel(c, "team", ChannelFlags{Replay: "maybe"}))},
		{"describe a bad endpoint", second(Describe(c, "No Such", "", time.Second))},
		{"invoke a bad command", second(Invoke(c, Invocation{Endpoint: "manager", Command: "Bad!", Timeout: time.Second}))},
		{"invoke --args not JSON", second(Invoke(c, Invocation{Endpoint: "manager", Command: "ps", Args: "{", Timeout: time.Second}))},
		{"invoke --timeout 0", second(Invoke(c, Invocation{Endpoint: "manager", Command: "ps"}))},
		{"deregister a local instance", second(DeregisterInstance(c, "manager", "local.x"))},
		{"deliveries as an agent", second(Deliveries(agent, false))},
		{"mint with --creds", second(Mint(agent, MintRequest{Name: "ana"}))},
		{"mint a dotted name", second(Mint(c, MintRequest{Name: "a.b", Profile: "agent"}))},
		{"mint a bad profile", second(Mint(c, MintRequest{Name: "ana", Profile: "root"}))},
		{"set-status outside a seat", second(SetStatus(c, "idle", nil))},
		{"leave outside a seat", second(Leave(c, "team"))},
		{"join with a dotted name", Join(t.Context(), c, Joining{Name: "a.b"}, nil, nil, nil)},
		{"join a bad channel", Join(t.Context(), c, Joining{Name: "ana", Channels: []string{"a b"}}, nil, nil, nil)},
		{"spawn --name with a dot", second(second3(Spawn(c, Spawning{SpawnArgs: client.SpawnArgs{Persona: "p", Name: "a.b"}})))},
		{"input of no text", second(Type(c, "shell", "", []string{""}, false, true))},
		{"input --keys of no such key", second(Type(c, "shell", "", []string{"Hyper"}, true, true))},
		{"input --keys --no-enter", second(Type(c, "shell", "", []string{"Enter"}, true, false))},
		{"approve with a reason", second(Answer(c, "shell", "", client.AnswerAllow, []string{"because"}))},
		{"screen --follow --interval 1ms", second(FollowScreen(t.Context(), c, "shell", "", time.Millisecond, show, nil))},
		{"attach with a detach key of Enter", attachErr},
		{"mcp as no identity", ServeMCP(t.Context(), c, "", "--creds", "dev", nil)},
		{"worktree ls outside a project", second(second3(Worktrees(t.Context())))},
		{"worktree rm outside a project", second(RemoveWorktree(t.Context(), "shell", false))},
		{"worktree prune outside a project", second(PruneWorktrees(t.Context()))},
		{"merge outside a project", second(Merge(t.Context(), "shell", false))},
		{"diff outside a project", second(Diff(t.Context(), "shell"))},
		{"review outside a project", second(StartReview(t.Context(), c, "shell"))},
	} {
		if !cliargs.IsUsage(tc.err) {
			t.Errorf("%s: %v, want bad input", tc.name, tc.err)
		}
	}
}

// second is the error of a call that returns a value too.
func second[T any](_ T, err error) error { return err }

// second3 drops the first of three results.
func second3[A, B any](_ A, b B, err error) (B, error) { return b, err }
