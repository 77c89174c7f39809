// Package cliargs makes a cobra command tree answer bad input in words:
// a typo of a command names the commands it is close to, a missing or an
// unexpected argument is named from the command's usage line, and every
// such refusal is a UsageError, which the program exits 2 on. Cobra's own
// answers print help and exit 0 for an unknown subcommand of a group, and
// count arguments without naming them. It also holds the rules of the
// flags every command shares: which commands act as the --creds identity,
// and that identity's creds checked before anything connects (creds.go).
// Of this module it imports only config and mesh/wire.
package cliargs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// UsageError is bad input: an unknown command or flag, a missing or
// unexpected argument, a value a flag does not take.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError in words.
func Usagef(format string, a ...any) error { return UsageError{fmt.Errorf(format, a...)} }

// IsUsage reports whether err is, or wraps, a UsageError.
func IsUsage(err error) bool {
	var u UsageError
	return errors.As(err, &u)
}

// Forgive makes every command of the tree answer a typo or a missing
// argument in words: an unknown subcommand is named with the ones it is
// close to, a missing argument by its name in the command's usage, and
// both exit 2. Cobra's own answers print help and exit 0 for an unknown
// subcommand of a group, and count arguments without naming them.
func Forgive(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{err} })
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
		return Usagef("%s; did you mean %s?", msg, OrList(s))
	}
	return Usagef("%s; `%s --help` lists its commands", msg, c.CommandPath())
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
		if missing := Missing(c, len(args)); missing != nil {
			return missing
		}
		if c.HasSubCommands() && len(Positionals(c.Use)) == 0 && len(args) > 0 {
			return unknownCommandError(c, args[0])
		}
		if n := len(Required(c.Use)) + len(optional(c.Use)); len(args) > n && !variadic(c.Use) {
			if n == 0 {
				return Usagef("%s: unexpected argument %q (it takes none)", ShortPath(c), args[n])
			}
			return Usagef("%s: unexpected argument %q; usage: %s", ShortPath(c), args[n], c.UseLine())
		}
		return Usagef("%s: %v; usage: %s", ShortPath(c), err, c.UseLine())
	}
}

// Missing is the refusal of a command given have arguments, naming the
// first required one missing; nil when none is.
func Missing(c *cobra.Command, have int) error {
	req := Required(c.Use)
	if have >= len(req) {
		return nil
	}
	return Usagef("%s: missing %s; usage: %s", ShortPath(c), req[have], c.UseLine())
}

// ShortPath is the command's path without the program's name: "send dm".
func ShortPath(c *cobra.Command) string {
	p := c.CommandPath()
	if _, rest, ok := strings.Cut(p, " "); ok {
		return rest
	}
	return p
}

// Positionals splits a usage line into its argument words, leaving out
// the command's name, flags and flag values ("--name N", "[--dms]").
func Positionals(use string) []string {
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

// Required lists a usage line's required arguments, "<text...>" counting
// as one.
func Required(use string) []string {
	var out []string
	for _, w := range Positionals(use) {
		if strings.HasPrefix(w, "<") {
			out = append(out, strings.Replace(w, "...", "", 1))
		}
	}
	return out
}

// optional lists a usage line's optional arguments.
func optional(use string) []string {
	var out []string
	for _, w := range Positionals(use) {
		if strings.HasPrefix(w, "[") {
			out = append(out, w)
		}
	}
	return out
}

// variadic reports whether the last argument of a usage line takes many
// words.
func variadic(use string) bool {
	p := Positionals(use)
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

// OrList joins words as a person lists choices: "a", "a or b", "a, b or c".
func OrList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// DidYouMean is "; did you mean #a or #b?" for the close names, each
// after sigil, else otherwise.
func DidYouMean(sigil string, close []string, otherwise string) string {
	if len(close) == 0 {
		return otherwise
	}
	for i := range close {
		close[i] = sigil + close[i]
	}
	return "; did you mean " + OrList(close) + "?"
}
