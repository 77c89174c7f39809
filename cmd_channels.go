package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// channelRow is one line of `cotal channels list`.
type channelRow struct {
	Channel      string `json:"channel"`
	Registered   bool   `json:"registered"`
	Used         bool   `json:"used"` // has posts in the retained history
	Class        string `json:"class"`
	Replay       bool   `json:"replay"`
	ReplayWindow string `json:"replayWindow,omitempty"`
	Description  string `json:"description,omitempty"`
	Instructions string `json:"instructions,omitempty"`
}

// configFlags are the registry fields a set or default command may change.
type configFlags struct {
	replay, window, class, description, instructions string
}

func (f *configFlags) add(cmd *cobra.Command, withTexts bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.replay, "replay", "", "replay history to a joiner: on or off")
	fl.StringVar(&f.window, "window", "", "how far back a replay reaches, e.g. 30m, 24h, 7d")
	fl.StringVar(&f.class, "class", "", "delivery class: live (subscribers at send time) or durable (stored for every member)")
	if withTexts {
		fl.StringVar(&f.description, "description", "", "what the channel is for (at most 200 characters)")
		fl.StringVar(&f.instructions, "instructions", "", "what posters should know (at most 2000 characters)")
	}
}

func (f *configFlags) patch() (mesh.ChannelConfig, error) {
	p := mesh.ChannelConfig{ReplayWindow: f.window, DeliveryClass: f.class, Description: f.description, Instructions: f.instructions}
	switch f.replay {
	case "":
	case "on", "true", "yes":
		on := true
		p.Replay = &on
	case "off", "false", "no":
		off := false
		p.Replay = &off
	default:
		return p, usagef("--replay %q: use on or off", f.replay)
	}
	if err := p.Validate(); err != nil {
		return p, usage(err)
	}
	return p, nil
}

func (f *configFlags) empty() bool {
	return *f == configFlags{}
}

func newChannelsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "channels",
		Short: "List channels and set how they deliver and replay",
		Long: `The channel registry says, per channel, whether a joiner gets history
(replay, window) and whether posts are stored for absent members (class durable)
or reach only those subscribed at send time (class live). A channel exists once
someone posts to it; registering it is optional. Unset values fall back to the
space defaults, then to replay on, whole retention, durable.`,
	}
	var asJSON bool
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print as JSON")

	list := &cobra.Command{
		Use:   "list",
		Short: "Every registered or used channel with its effective settings",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctx, cancel := ctxTimeout()
			defer cancel()
			e, err := g.endpoint(ctx, mesh.Options{OneShot: true})
			if err != nil {
				return err
			}
			defer e.Close()
			reg, err := e.Registry(ctx)
			if err != nil {
				return err
			}
			names, entries, err := reg.List(ctx)
			if err != nil {
				return err
			}
			def, err := reg.Defaults(ctx)
			if err != nil {
				return err
			}
			var used map[string]bool
			if g.readsStorage() {
				used = usedChannels(ctx, e)
			}
			all := map[string]bool{}
			for _, n := range names {
				all[n] = true
			}
			for n := range used {
				all[n] = true
			}
			rows := make([]channelRow, 0, len(all))
			for n := range all {
				var ch *mesh.ChannelConfig
				if c, ok := entries[n]; ok {
					ch = &c
				}
				eff := mesh.Resolve(ch, def)
				r := channelRow{Channel: n, Registered: ch != nil, Used: used[n], Class: eff.Class, Replay: eff.Replay}
				switch {
				case ch != nil && ch.ReplayWindow != "":
					r.ReplayWindow = ch.ReplayWindow
				case def != nil:
					r.ReplayWindow = def.ReplayWindow
				}
				if ch != nil {
					r.Description, r.Instructions = ch.Description, ch.Instructions
				}
				rows = append(rows, r)
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i].Channel < rows[j].Channel })
			if asJSON {
				b, _ := json.MarshalIndent(map[string]any{"defaults": def, "channels": rows}, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			fmt.Fprintf(g.stdout, "defaults: %s\n", describeConfig(def))
			if len(rows) == 0 {
				fmt.Fprintln(g.stdout, "no channels yet: one exists once someone posts to it")
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CHANNEL\tCLASS\tREPLAY\tWINDOW\tDESCRIPTION")
			for _, r := range rows {
				name := r.Channel
				if !r.Registered {
					name += " (unregistered)"
				}
				replay := "off"
				if r.Replay {
					replay = "on"
				}
				window := r.ReplayWindow
				if window == "" {
					window = "all"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, r.Class, replay, window, dash(wire.CleanLabel(r.Description)))
			}
			return tw.Flush()
		},
	}

	var setFlags configFlags
	set := &cobra.Command{
		Use:   "set <channel>",
		Short: "Register a channel or change its settings (merged with what is set)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := wire.ValidateConcreteChannel(args[0]); err != nil {
				return usage(err)
			}
			p, err := setFlags.patch()
			if err != nil {
				return err
			}
			if setFlags.empty() {
				return usagef("nothing to set: give --replay, --window, --class, --description or --instructions")
			}
			return writeRegistry(g, args[0], p, asJSON)
		},
	}
	setFlags.add(set, true)

	var defFlags configFlags
	def := &cobra.Command{
		Use:   "default",
		Short: "Show or change the space defaults every channel falls back to",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			p, err := defFlags.patch()
			if err != nil {
				return err
			}
			if defFlags.empty() {
				ctx, cancel := ctxTimeout()
				defer cancel()
				e, err := g.endpoint(ctx, mesh.Options{OneShot: true})
				if err != nil {
					return err
				}
				defer e.Close()
				reg, err := e.Registry(ctx)
				if err != nil {
					return err
				}
				d, err := reg.Defaults(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					b, _ := json.MarshalIndent(d, "", "  ")
					fmt.Fprintln(g.stdout, string(b))
					return nil
				}
				fmt.Fprintf(g.stdout, "defaults: %s\n", describeConfig(d))
				return nil
			}
			return writeRegistry(g, "", p, asJSON)
		},
	}
	defFlags.add(def, false)

	cmd.AddCommand(list, set, def)
	return cmd
}

func writeRegistry(g *globals, channel string, p mesh.ChannelConfig, asJSON bool) error {
	return g.oneShot(func(ctx context.Context, e *mesh.Endpoint) error {
		return writeRegistryWith(ctx, g, e, channel, p, asJSON)
	})
}

func writeRegistryWith(ctx context.Context, g *globals, e *mesh.Endpoint, channel string, p mesh.ChannelConfig, asJSON bool) error {
	reg, err := e.Registry(ctx)
	if err != nil {
		return err
	}
	got, err := reg.Set(ctx, channel, p)
	if errors.Is(err, mesh.ErrBadChannelConfig) {
		return usage(err)
	}
	if err != nil {
		return err
	}
	if asJSON {
		b, _ := json.MarshalIndent(got, "", "  ")
		fmt.Fprintln(g.stdout, string(b))
		return nil
	}
	if channel == "" {
		fmt.Fprintf(g.stdout, "defaults: %s\n", describeConfig(&got))
	} else {
		fmt.Fprintf(g.stdout, "#%s: %s\n", channel, describeConfig(&got))
	}
	return nil
}

// describeConfig is a registry entry in one line: only what is set.
func describeConfig(c *mesh.ChannelConfig) string {
	if c == nil {
		return "(none set: replay on, whole retention, durable)"
	}
	var parts []string
	if c.DeliveryClass != "" {
		parts = append(parts, "class "+c.DeliveryClass)
	}
	if c.Replay != nil {
		parts = append(parts, map[bool]string{true: "replay on", false: "replay off"}[*c.Replay])
	}
	if c.ReplayWindow != "" {
		parts = append(parts, "window "+c.ReplayWindow)
	}
	if c.Description != "" {
		parts = append(parts, fmt.Sprintf("description %q", c.Description))
	}
	if c.Instructions != "" {
		parts = append(parts, fmt.Sprintf("instructions %q", c.Instructions))
	}
	if len(parts) == 0 {
		return "(nothing set)"
	}
	return strings.Join(parts, ", ")
}

// usedChannels lists the channels with retained posts, read from the CHAT
// stream's subjects (nil when the identity may not read the stream).
func usedChannels(ctx context.Context, e *mesh.Endpoint) map[string]bool {
	js, err := jetstream.New(e.Conn())
	if err != nil {
		return nil
	}
	st, err := js.Stream(ctx, wire.ChatStream(e.Space()))
	if err != nil {
		return nil
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(wire.ChatSubjects(e.Space())))
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for subj := range info.State.Subjects {
		if s, err := wire.ParseSubject(subj); err == nil && s.Kind == wire.KindChannel {
			out[s.Channel] = true
		}
	}
	return out
}
