package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
)

func newReviewCmd(g *globals) *cobra.Command {
	var asJSON bool
	return withJSON(&cobra.Command{
		Use:   "review <seat>",
		Short: "Comment on a seat's diff in $EDITOR and send the comments to it as one DM",
		Long: `Open the seat's diff (cotal diff) in $VISUAL or $EDITOR. Write your comments
on lines of their own under the diff line they are about; a line that is not
part of the diff is a comment (start it with > if it would begin with a
space, + or -), and a comment under a file's header is about the whole file.
When the editor exits, every comment goes to the seat as one DM naming the
file and line of each (the line in the seat's version, or in the base's for
a removed line). Write none and nothing is sent.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			rv, err := clirun.StartReview(context.Background(), g.caller(), args[0])
			if err != nil {
				return err
			}
			rv.Editor.Stdin, rv.Editor.Stdout, rv.Editor.Stderr = os.Stdin, g.stdout, g.stderr
			comments, rc, err := rv.Send(rv.Editor.Run())
			switch {
			case err != nil:
				return err
			case asJSON:
				clirender.ReviewJSON(g.stdout, args[0], comments, rc)
			default:
				fmt.Fprintln(g.stdout, clirender.Reviewed(args[0], comments, rc))
			}
			return nil
		},
	}, &asJSON, "print the comments and the receipt as JSON")
}
