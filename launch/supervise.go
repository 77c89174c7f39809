package launch

import (
	"context"
	"fmt"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/quit"
)

// SuperviseOptions are the flags of `cotal supervise`.
type SuperviseOptions struct {
	IDFile      string
	Project     string
	Readiness   time.Duration
	MaxSessions int
}

// Supervise is `cotal supervise`: a manager instance of its own in this
// process, serving the running mesh c reaches, until a quit signal its
// rule accepts.
func Supervise(ctx context.Context, c Caller, o SuperviseOptions) error {
	if err := CheckManager(o.MaxSessions, o.Readiness); err != nil {
		return err
	}
	t, err := c.Target()
	if err != nil {
		return err
	}
	h, err := host.Start(ctx, host.Config{
		Paths: t.Paths, Open: t.Record.Mode == config.ModeOpen, Log: c.Err,
		ProjectDir: o.Project, Readiness: o.Readiness, MaxSessions: o.MaxSessions,
		Supervise: &host.Supervise{URL: t.URL, Creds: t.Creds, Trust: t.Trust, InstanceFile: o.IDFile},
	})
	if err != nil {
		return err
	}
	ctx, stop := quit.Until(ctx, c.Quit(h))
	defer stop()
	mgr := h.Manager()
	fmt.Fprintf(c.Out, "manager instance %s serving space %s at epoch %d; Ctrl-C to stop\n", mgr.InstanceID(), t.Paths.Space, mgr.Epoch())
	return h.Run(ctx)
}
