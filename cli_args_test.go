package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cotal-go/cotal/internal/cliargs"
)

// TestTyposAndMissingArgumentsAreNamed: an unknown subcommand is bad input
// that names the commands it is close to (it printed the group's help and
// exited 0), and a missing argument is named from the usage line (cobra
// said only how many it wanted).
func TestTyposAndMissingArgumentsAreNamed(t *testing.T) {
	c := newCLI(t, "typos")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"send", "mgs"}, `unknown command "mgs" for "cotal send"; did you mean msg?`},
		{[]string{"sned"}, `unknown command "sned" for "cotal"; did you mean send?`},
		{[]string{"channels", "lst"}, `unknown command "lst" for "cotal channels"; did you mean list or set?`},
		{[]string{"mcp", "cofig"}, `unknown command "cofig" for "cotal mcp"; did you mean config?`},
		{[]string{"history", "limt", "x"}, `history: unexpected argument "x"`},
		{[]string{"help", "send", "mgs"}, `unknown command "mgs" for "cotal send"; did you mean msg?`},
		{[]string{"completion", "bsh"}, `unknown command "bsh" for "cotal completion"; did you mean bash`},
		{[]string{"send", "dm", "bob"}, "send dm: missing <text>"},
		{[]string{"send", "msg"}, "send msg: missing <channel>"},
		{[]string{"send", "ask", "reviewer"}, "send ask: missing <text>"},
		{[]string{"history"}, "history: missing <channel>"},
		{[]string{"invoke", "manager"}, "invoke: missing <command>"},
		{[]string{"screen"}, "screen: missing <name>"},
		{[]string{"input", "shell"}, "input: missing <text>"},
		{[]string{"mint"}, "mint: missing <name>"},
		{[]string{"set-status"}, "set-status: missing <idle|waiting|working>"},
		{[]string{"down", "now"}, `down: unexpected argument "now"`},
	}
	for _, tc := range tests {
		out, errOut, code := c.run(tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("cotal %s: exit %d\nstdout %q\nstderr %q\nwant exit 2 and one line saying %q", strings.Join(tc.args, " "), code, out, errOut, tc.want)
		}
	}
}

// TestEveryGroupRefusesAnUnknownSubcommand walks the whole tree: no
// command with subcommands takes a word that is none of them.
func TestEveryGroupRefusesAnUnknownSubcommand(t *testing.T) {
	c := newCLI(t, "groups")
	var groups [][]string
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		if cmd.HasSubCommands() && len(cliargs.Positionals(cmd.Use)) == 0 {
			groups = append(groups, path)
		}
		for _, sub := range cmd.Commands() {
			if !strings.HasPrefix(sub.Name(), "__") {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
	}
	root := newRoot(c.globals())
	walk(root, nil)
	if len(groups) < 5 {
		t.Fatalf("found only %d groups: %v", len(groups), groups)
	}
	for _, path := range groups {
		_, errOut, code := c.run(append(path, "zzqq")...)
		if code != exitUsage || !strings.Contains(errOut, `unknown command "zzqq"`) {
			t.Errorf("cotal %s zzqq: exit %d, stderr %q; want exit 2, unknown command", strings.Join(path, " "), code, errOut)
		}
	}
}

// TestFlagHelpNamesOneWord: pflag takes a flag usage's first `quoted`
// word as the name of its value in --help, so a quoted command there
// reads as the flag's argument ("--fresh down --preserve-state").
func TestFlagHelpNamesOneWord(t *testing.T) {
	c := newCLI(t, "flaghelp")
	var walk func(cmd *cobra.Command)
	n := 0
	walk = func(cmd *cobra.Command) {
		check := func(f *pflag.Flag) {
			n++
			if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
				t.Errorf("cotal %s --%s: its help shows the value as %q; quote no command in a flag's usage", cmd.CommandPath(), f.Name, name)
			}
		}
		cmd.LocalFlags().VisitAll(check)
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(c.globals()))
	if n < 50 {
		t.Fatalf("checked only %d flags", n)
	}
}
