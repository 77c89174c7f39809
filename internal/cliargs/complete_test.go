package cliargs

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// TestCompleteAttachesArgumentsAndFlags: a key names a command's first
// argument, "path --flag" one of its flags, "--flag" one of the root's;
// a key naming nothing is skipped, and the root's own arguments are
// never completed.
func TestCompleteAttachesArgumentsAndFlags(t *testing.T) {
	root := &cobra.Command{Use: "cotal"}
	root.PersistentFlags().String("space", "", "")
	send := &cobra.Command{Use: "send"}
	msg := &cobra.Command{Use: "msg <channel> <text...>", Run: func(*cobra.Command, []string) {}}
	msg.Flags().StringSlice("mention", nil, "")
	send.AddCommand(msg)
	root.AddCommand(send)
	offer := func(word string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{word}, cobra.ShellCompDirectiveNoFileComp
		}
	}
	Complete(root, map[string]cobra.CompletionFunc{
		"send msg": offer("team"), "send msg --mention": offer("ana"), "--space": offer("default"),
		"nosuch": offer("x"), "": offer("root"),
	})
	if msg.ValidArgsFunction == nil {
		t.Fatal("send msg: no argument completion")
	}
	if got, _ := msg.ValidArgsFunction(msg, nil, ""); !slices.Equal(got, []cobra.Completion{"team"}) {
		t.Errorf("send msg's first argument completes %q, want team", got)
	}
	if got, _ := msg.ValidArgsFunction(msg, []string{"team"}, ""); len(got) != 0 {
		t.Errorf("send msg's text completes %q, want nothing", got)
	}
	for _, c := range []struct {
		cmd        *cobra.Command
		flag, want string
	}{{msg, "mention", "ana"}, {root, "space", "default"}} {
		fn, ok := c.cmd.GetFlagCompletionFunc(c.flag)
		if !ok {
			t.Errorf("%s --%s: no completion", c.cmd.Name(), c.flag)
			continue
		}
		if got, _ := fn(c.cmd, nil, ""); !slices.Equal(got, []cobra.Completion{c.want}) {
			t.Errorf("%s --%s completes %q, want %s", c.cmd.Name(), c.flag, got, c.want)
		}
	}
	if root.ValidArgsFunction != nil {
		t.Error("the root's arguments got a completion")
	}
}
