package cliargs_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/internal/cliargs"
)

// tree is a small program: a group with two commands, one of them with a
// required and a variadic argument.
func tree() *cobra.Command {
	root := &cobra.Command{Use: "prog", SilenceErrors: true, SilenceUsage: true, Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error { return nil }}
	group := &cobra.Command{Use: "send"}
	run := func(*cobra.Command, []string) error { return nil }
	group.AddCommand(
		&cobra.Command{Use: "msg <channel> <text...>", Args: cobra.MinimumNArgs(2), RunE: run},
		&cobra.Command{Use: "mark --id ID [--all]", Args: cobra.NoArgs, RunE: run})
	root.AddCommand(group)
	root.Flags().Int("n", 0, "a number")
	cliargs.Forgive(root)
	return root
}

func TestRefusalsAreUsageErrorsInWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"send", "mgs"}, `unknown command "mgs" for "prog send"; did you mean msg?`},
		{[]string{"sned"}, `unknown command "sned" for "prog"; did you mean send?`},
		{[]string{"send", "msg"}, "send msg: missing <channel>; usage: prog send msg <channel> <text...>"},
		{[]string{"send", "msg", "team"}, "send msg: missing <text>"},
		{[]string{"send", "mark", "x"}, `send mark: unexpected argument "x" (it takes none)`},
		{[]string{"help", "sned"}, `unknown command "sned" for "prog"`},
		{[]string{"--n", "x"}, `invalid argument "x" for "--n"`},
		{[]string{"--nope"}, "unknown flag: --nope"},
	} {
		root := tree()
		root.SetArgs(c.args)
		root.SetOut(&bytes.Buffer{})
		err := root.Execute()
		if err == nil || !cliargs.IsUsage(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("prog %s: %v (usage %v); want a usage error saying %q", strings.Join(c.args, " "), err, cliargs.IsUsage(err), c.want)
		}
	}
	root := tree()
	root.SetArgs([]string{"send", "msg", "team", "hello", "there"})
	if err := root.Execute(); err != nil {
		t.Fatalf("a good command line: %v", err)
	}
}

func TestPositionals(t *testing.T) {
	for use, want := range map[string][]string{
		"msg <channel> <text...>":                   {"<channel>", "<text...>"},
		"mark --id ID [--all]":                      nil,
		"join --name N [--role R] [--channel C]...": nil,
		"use [space]":                               {"[space]"},
		"clear --force [--dms]":                     nil,
	} {
		if got := cliargs.Positionals(use); !slices.Equal(got, want) {
			t.Errorf("Positionals(%q) = %q, want %q", use, got, want)
		}
	}
	if got := cliargs.Required("msg <channel> <text...>"); !slices.Equal(got, []string{"<channel>", "<text>"}) {
		t.Errorf("Required = %q", got)
	}
	if got := cliargs.OrList([]string{"a", "b", "c"}); got != "a, b or c" {
		t.Errorf("OrList = %q", got)
	}
}
