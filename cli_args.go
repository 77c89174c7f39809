package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/internal/typo"
)

// forgive makes every command of the tree answer a typo or a missing
// argument in words: an unknown subcommand is named with the ones it is
// close to, a missing argument by its name in the command's usage, and
// both exit 2. Cobra's own answers print help and exit 0 for an unknown
// subcommand of a group, and count arguments without naming them.
func forgive(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.SuggestionsMinimumDistance = 2
		switch {
		case c.Name() == "help" && c.Parent() == root:
			c.Args = helpArgs
		case strings.HasPrefix(c.Name(), "__"):
		case c.HasSubCommands() && !c.Runnable():
			// A group run bare shows its help; with an argument that is
			// none of its commands it says so.
			c.Args = unknownSubcommand
			c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		default:
			c.Args = namedArgs(c.Args)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// unknownSubcommand refuses any argument of a group command.
func unknownSubcommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return unknownCommandError(c, args[0])
}

// unknownCommandError names the typo, where it was typed, and the commands
// it is close to.
func unknownCommandError(c *cobra.Command, typed string) error {
	msg := fmt.Sprintf("unknown command %q for %q", typed, c.CommandPath())
	if s := c.SuggestionsFor(typed); len(s) > 0 {
		return usagef("%s; did you mean %s?", msg, orList(s))
	}
	return usagef("%s; `%s --help` lists its commands", msg, c.CommandPath())
}

// namedArgs wraps a command's argument check so that its refusal names
// the missing argument from the command's usage line, or the unexpected
// one; a command with subcommands calls an unexpected one an unknown
// command.
func namedArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		check = cobra.ArbitraryArgs
	}
	return func(c *cobra.Command, args []string) error {
		err := check(c, args)
		if err == nil {
			return nil
		}
		if missing := missingArg(c, len(args)); missing != nil {
			return missing
		}
		if c.HasSubCommands() && len(positionals(c.Use)) == 0 && len(args) > 0 {
			return unknownCommandError(c, args[0])
		}
		if n := len(required(c.Use)) + len(optional(c.Use)); len(args) > n && !variadic(c.Use) {
			if n == 0 {
				return usagef("%s: unexpected argument %q (it takes none)", shortPath(c), args[n])
			}
			return usagef("%s: unexpected argument %q; usage: %s", shortPath(c), args[n], c.UseLine())
		}
		return usagef("%s: %v; usage: %s", shortPath(c), err, c.UseLine())
	}
}

// missingArg is the refusal of a command given have arguments, naming the
// first required one missing; nil when none is.
func missingArg(c *cobra.Command, have int) error {
	req := required(c.Use)
	if have >= len(req) {
		return nil
	}
	return usagef("%s: missing %s; usage: %s", shortPath(c), req[have], c.UseLine())
}

// shortPath is the command's path without the program's name: "send dm".
func shortPath(c *cobra.Command) string {
	p := c.CommandPath()
	if _, rest, ok := strings.Cut(p, " "); ok {
		return rest
	}
	return p
}

// positionals splits a usage line into its argument words, leaving out
// the command's name, flags and flag values ("--name N", "[--dms]").
func positionals(use string) []string {
	words := strings.Fields(use)
	var out []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case strings.HasPrefix(w, "--") || strings.HasPrefix(w, "[--"):
			if !strings.HasPrefix(w, "[") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") && !strings.HasPrefix(words[i+1], "[") {
				i++ // the flag's value
			}
		case strings.HasPrefix(w, "<") || strings.HasPrefix(w, "["):
			out = append(out, w)
		}
	}
	return out
}

// required lists a usage line's required arguments, "<text...>" counting
// as one.
func required(use string) []string {
	var out []string
	for _, w := range positionals(use) {
		if strings.HasPrefix(w, "<") {
			out = append(out, strings.Replace(w, "...", "", 1))
		}
	}
	return out
}

// optional lists a usage line's optional arguments.
func optional(use string) []string {
	var out []string
	for _, w := range positionals(use) {
		if strings.HasPrefix(w, "[") {
			out = append(out, w)
		}
	}
	return out
}

// variadic reports whether the last argument of a usage line takes many
// words.
func variadic(use string) bool {
	p := positionals(use)
	return len(p) > 0 && strings.Contains(p[len(p)-1], "...")
}

// helpArgs lets `cotal help <command>` refuse a command that does not
// exist, as the command itself would, instead of printing the root's help.
func helpArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	found, rest, err := c.Root().Find(args)
	if err != nil || found == nil {
		return unknownCommandError(c.Root(), args[0])
	}
	if len(rest) > 0 && found.HasSubCommands() {
		return unknownCommandError(found, rest[0])
	}
	return nil
}

// orList joins words as a person lists choices: "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// closeMatches lists the names a typed one is close to: at most two typos
// away, or one it starts.
func closeMatches(typed string, names []string) []string {
	return typo.Close(typed, names, 2, true)
}
