package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/broker"
)

// broker config prints the trust block of the space's own keys, and
// --json the same as values; nothing in either is a seed.
func TestBrokerConfigPrintsTheSpacesTrust(t *testing.T) {
	c := newCLI(t, "trust")
	text, errOut, code := c.run("broker", "config")
	if code != 0 {
		t.Fatalf("broker config: exit %d: %s", code, errOut)
	}
	out, _, code := c.run("broker", "config", "--json")
	var tr broker.ServerTrust
	if err := json.Unmarshal([]byte(out), &tr); err != nil || code != 0 {
		t.Fatalf("broker config --json: exit %d, %v\n%s", code, err, out)
	}
	auth, err := broker.LoadAuthority(c.paths)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Account != auth.AccountKey() || tr.SystemAccount != auth.SystemKey() || tr.Config != text {
		t.Fatalf("--json names account %s system %s; the store's keys are %s %s (or its block differs from the text)", tr.Account, tr.SystemAccount, auth.AccountKey(), auth.SystemKey())
	}
	for _, want := range []string{"operator: eyJ", "system_account: " + auth.SystemKey(), "resolver: MEMORY", auth.AccountKey() + ": eyJ", "max_control_line: 65536"} {
		if !strings.Contains(text, want) {
			t.Errorf("the block lacks %q:\n%s", want, text)
		}
	}
	for _, f := range strings.Fields(text) { // an nkey seed is 58 characters starting with S
		if len(f) == 58 && f[0] == 'S' {
			t.Fatalf("the block carries what looks like a seed: %s", f)
		}
	}
}
