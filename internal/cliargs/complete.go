package cliargs

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// FirstArg completes a command's first argument with fn and nothing after
// it: what follows is free text.
func FirstArg(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(c, args, toComplete)
	}
}

// Names makes a completion function of a lookup: it runs within within
// and offers the names that start with what was typed, sorted and once
// each; it offers no files. A lookup still running at the deadline is
// left to end with the process.
func Names(within time.Duration, lookup func(context.Context) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		found := make(chan []string, 1)
		go func() { found <- lookup(ctx) }()
		var all []string
		select {
		case all = <-found:
		case <-ctx.Done():
		}
		var out []cobra.Completion
		for _, n := range all {
			if strings.HasPrefix(n, toComplete) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// Complete gives the commands of root the completions at names: a key
// "send msg" completes that command's first argument (FirstArg), "send msg
// --mention" one of its flags, "--space" a flag of root. A key naming no
// command or flag is skipped.
func Complete(root *cobra.Command, at map[string]cobra.CompletionFunc) {
	for key, fn := range at {
		path, flag, isFlag := strings.Cut(key, "--")
		c, _, err := root.Find(strings.Fields(path))
		switch {
		case err != nil:
		case isFlag:
			_ = c.RegisterFlagCompletionFunc(flag, fn)
		case c != root:
			c.ValidArgsFunction = FirstArg(fn)
		}
	}
}
