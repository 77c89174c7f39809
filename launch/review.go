package launch

import (
	"context"
	"os/exec"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
)

// diffText is a seat's diff as the dashboard's D shows it.
func diffText(ctx context.Context, seat string) (string, error) {
	d, err := clirun.Diff(ctx, seat)
	if err != nil {
		return "", err
	}
	return clirender.DiffText(d), nil
}

// review is the dashboard's R: the review's editor, and what sends the
// comments once it exits, saying what it sent.
func review(c Caller) func(ctx context.Context, seat string) (*exec.Cmd, func(error) (string, error), error) {
	return func(ctx context.Context, seat string) (*exec.Cmd, func(error) (string, error), error) {
		rv, err := clirun.StartReview(ctx, c.Caller, seat)
		if err != nil {
			return nil, nil, err
		}
		return rv.Editor, func(edited error) (string, error) {
			comments, rc, err := rv.Send(edited)
			if err != nil {
				return "", err
			}
			return clirender.Reviewed(seat, comments, rc), nil
		}, nil
	}
}
