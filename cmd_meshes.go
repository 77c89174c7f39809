package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
)

// connectIfRunning connects to the space's running mesh as the local
// operator, or returns nil when it is not running (no process holds its
// store lock). A mesh that runs but cannot be reached is an error: what
// needs the mesh now must not be put off to its next start.
func connectIfRunning(g *globals) (*nats.Conn, error) {
	_, p, _, err := g.paths()
	if err != nil {
		return nil, err
	}
	s, err := host.Probe(p)
	if err != nil || !s.Running {
		return nil, err
	}
	rec, err := s.Serving()
	if err != nil {
		return nil, err
	}
	t := target{paths: p, record: rec, url: rec.URL}
	if rec.Mode != config.ModeOpen {
		t.creds = p.OperatorCreds()
	}
	nc, err := t.connect("cotal mint")
	if err != nil {
		return nil, fmt.Errorf("mesh %s runs (pid %d) but did not answer: %w", p.Space, s.PID, err)
	}
	return nc, nil
}

// meshRow is one line of `cotal meshes`.
type meshRow struct {
	Space    string    `json:"space"`
	State    string    `json:"state"` // running, unreachable, stopped, crashed, never started
	URL      string    `json:"url,omitempty"`
	PID      int       `json:"pid,omitempty"`
	Mode     string    `json:"mode,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	StoreDir string    `json:"storeDir"`
	Folder   string    `json:"folder,omitempty"` // the folder the mesh serves, as its last run recorded
	Default  bool      `json:"default"`
}

func newMeshesCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "meshes",
		Short: "List every known space, running or not",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			data, err := config.DataDir()
			if err != nil {
				return err
			}
			spaces, err := config.KnownSpaces(data)
			if err != nil {
				return err
			}
			def, _ := config.DefaultSpaceChoice(data)
			rows := make([]meshRow, 0, len(spaces))
			for _, p := range spaces {
				rows = append(rows, meshState(p, def))
			}
			if asJSON {
				b, _ := json.MarshalIndent(rows, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			if len(rows) == 0 {
				fmt.Fprintln(g.stdout, "no spaces yet; `cotal up` starts one")
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SPACE\tSTATE\tURL\tPID\tMODE\tFOLDER\tSTORE")
			for _, r := range rows {
				name := r.Space
				if r.Default {
					name += " *"
				}
				pid := "-"
				if r.PID != 0 {
					pid = fmt.Sprint(r.PID)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, r.State, dash(r.URL), pid, dash(r.Mode), dash(r.Folder), r.StoreDir)
			}
			tw.Flush()
			if def != "" {
				fmt.Fprintln(g.stdout, "* the `cotal use` default")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

func meshState(p config.Paths, def string) meshRow {
	r := meshRow{Space: p.Space, StoreDir: p.StoreDir, Default: p.Space == def, State: "never started"}
	s, err := host.Probe(p)
	if err != nil {
		r.State = "unknown (" + err.Error() + ")"
		return r
	}
	var re *host.RecordError
	switch _, err := s.Serving(); {
	case errors.As(err, &re):
		r.PID = s.PID
		r.State = "running, broker.json damaged"
		if re.Starting {
			r.State = "starting"
		}
		return r
	case s.RecordErr != nil:
		return r // nothing runs and nothing says it ever did
	}
	rec := s.Record
	r.URL, r.PID, r.Mode, r.Started, r.Folder = rec.URL, rec.PID, rec.Mode, rec.Started, rec.Folder
	switch {
	case s.Running && !reachable(rec.URL):
		r.State = "unreachable"
	case s.Running:
		r.State = "running"
	case !rec.Stopped.IsZero():
		r.State = "stopped"
	default:
		r.State = "crashed (pid gone)"
	}
	return r
}

// reachable reports whether something accepts TCP connections at a nats URL.
func reachable(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// useReport is `cotal use --json`: the default set with `cotal use` ("" for
// none) and the space commands run here use, with why.
type useReport struct {
	Default string `json:"default"`
	Space   string `json:"space"`
	Source  string `json:"source"`
}

func newUseCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "use [space]",
		Short: "Set (or show) the default space for commands run without --space",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			data, err := config.DataDir()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if err := config.SetDefaultSpace(data, args[0]); err != nil {
					return usage(err)
				}
			}
			def, err := config.DefaultSpaceChoice(data)
			if err != nil {
				return err
			}
			_, _, res, err := g.paths()
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				printJSON(g.stdout, useReport{Default: def, Space: res.Space, Source: res.Source})
			case len(args) == 1:
				fmt.Fprintf(g.stdout, "default space is now %s\n", args[0])
			case def == "":
				fmt.Fprintf(g.stdout, "no default set; commands here use space %s (%s)\n", res.Space, res.Source)
			default:
				fmt.Fprintf(g.stdout, "default space: %s\n", def)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
