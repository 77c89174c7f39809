package mcp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestCommandNamesWhoTheAgentIs: the command a client starts acts as the
// creds when given (the name then unused), else as the name in its space
// on an open mesh; with neither it says what to pass.
func TestCommandNamesWhoTheAgentIs(t *testing.T) {
	for _, tc := range []struct {
		creds, name, space, server, pin, ca string
		want                                []string
	}{
		{"/c/a.creds", "x", "s", "", "", "", []string{"/bin/cotal", "mcp", "--creds", "/c/a.creds"}},
		{"/c/a.creds", "", "", "nats://h:1", "", "", []string{"/bin/cotal", "mcp", "--creds", "/c/a.creds", "--server", "nats://h:1"}},
		{"/c/a.creds", "", "", "tls://h:1", "ab12", "", []string{"/bin/cotal", "mcp", "--creds", "/c/a.creds", "--server", "tls://h:1", "--tls-pin", "ab12"}},
		{"/c/a.creds", "", "", "tls://h:1", "", "/ca.pem", []string{"/bin/cotal", "mcp", "--creds", "/c/a.creds", "--server", "tls://h:1", "--tls-ca", "/ca.pem"}},
		{"", "x", "s", "", "", "", []string{"/bin/cotal", "mcp", "--name", "x", "--space", "s"}},
		{"", "x", "", "", "", "", []string{"/bin/cotal", "mcp", "--name", "x"}},
	} {
		got, err := mcp.Command("/bin/cotal", tc.creds, tc.name, tc.space, tc.server, tc.pin, tc.ca)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Command(%q, %q, %q, %q, %q, %q) = %q, %v; want %q", tc.creds, tc.name, tc.space, tc.server, tc.pin, tc.ca, got, err, tc.want)
		}
	}
	if _, err := mcp.Command("/bin/cotal", "", "", "s", "", "", ""); err == nil || !strings.Contains(err.Error(), "say who the agent is") {
		t.Errorf("Command with no one to act as: %v", err)
	}
}

// TestSelfIsTheCredsPrincipal: a server with creds is their principal, in
// their space or else the one it was given.
func TestSelfIsTheCredsPrincipal(t *testing.T) {
	info := wire.CredsInfo{Principal: wire.Principal{Owner: "o", Actor: "w1"}}
	info.Role = "coder"
	got := mcp.Acting{Space: "given"}.Self(info)
	if got.Name != "w1" || got.ID != info.Principal.ID() || got.Role != "coder" || got.Space != "given" {
		t.Fatalf("Self = %+v", got)
	}
	info.Space = "theirs"
	if got := (mcp.Acting{Space: "given"}).Self(info); got.Space != "theirs" {
		t.Fatalf("Self's space = %q, want the creds' own", got.Space)
	}
}
