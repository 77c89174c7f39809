package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

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
	var err error
	if p.Replay, err = mesh.ParseReplay(f.replay); err != nil {
		return p, usagef("--%v", err)
	}
	if err := p.Validate(); err != nil {
		return p, usage(err)
	}
	return p, nil
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
			return g.oneShot(func(ctx context.Context, e *mesh.Endpoint) error {
				rows, def, err := e.ListChannels(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					return g.resultJSON(map[string]any{"defaults": def, "channels": rows})
				}
				return clirender.Channels(g.stdout, rows, def)
			})
		},
	}
	var setFlags, defFlags configFlags
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
			if setFlags == (configFlags{}) {
				return usagef("nothing to set: give --replay, --window, --class, --description or --instructions")
			}
			return writeRegistry(g, args[0], p, asJSON)
		},
	}
	setFlags.add(set, true)
	def := &cobra.Command{
		Use:   "default",
		Short: "Show or change the space defaults every channel falls back to",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			p, err := defFlags.patch()
			if err != nil {
				return err
			}
			if defFlags != (configFlags{}) {
				return writeRegistry(g, "", p, asJSON)
			}
			return g.oneShot(func(ctx context.Context, e *mesh.Endpoint) error {
				reg, err := e.Registry(ctx)
				if err != nil {
					return err
				}
				d, err := reg.Defaults(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					return g.resultJSON(d)
				}
				fmt.Fprintf(g.stdout, "defaults: %s\n", d)
				return nil
			})
		},
	}
	defFlags.add(def, false)
	cmd.AddCommand(list, set, def)
	return cmd
}

// writeRegistry merges p into a channel's registry entry, or into the
// space defaults when channel is "", and prints what is set after.
func writeRegistry(g *globals, channel string, p mesh.ChannelConfig, asJSON bool) error {
	return g.oneShot(func(ctx context.Context, e *mesh.Endpoint) error {
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
		switch {
		case asJSON:
			return g.resultJSON(got)
		case channel == "":
			fmt.Fprintf(g.stdout, "defaults: %s\n", &got)
		default:
			fmt.Fprintf(g.stdout, "#%s: %s\n", channel, &got)
		}
		return nil
	})
}
