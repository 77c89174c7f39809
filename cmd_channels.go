package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
)

// addChannelFlags registers the registry fields a set or default command
// may change; withTexts adds the channel's own texts.
func addChannelFlags(cmd *cobra.Command, f *clirun.ChannelFlags, withTexts bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.Replay, "replay", "", "replay history to a joiner: on or off")
	fl.StringVar(&f.Window, "window", "", "how far back a replay reaches, e.g. 30m, 24h, 7d")
	fl.StringVar(&f.Class, "class", "", "delivery class: live (subscribers at send time) or durable (stored for every member)")
	if withTexts {
		fl.StringVar(&f.Description, "description", "", "what the channel is for (at most 200 characters)")
		fl.StringVar(&f.Instructions, "instructions", "", "what posters should know (at most 2000 characters)")
	}
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
			rows, def, err := clirun.Channels(g.caller())
			if err != nil {
				return err
			}
			return clirender.ChannelList(g.stdout, rows, def, asJSON)
		},
	}
	var setFlags, defFlags clirun.ChannelFlags
	set := &cobra.Command{
		Use:   "set <channel>",
		Short: "Register a channel or change its settings (merged with what is set)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			got, err := clirun.SetChannel(g.caller(), args[0], setFlags)
			if err == nil {
				clirender.ChannelConfig(g.stdout, args[0], got, asJSON)
			}
			return err
		},
	}
	addChannelFlags(set, &setFlags, true)
	def := &cobra.Command{
		Use:   "default",
		Short: "Show or change the space defaults every channel falls back to",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			got, err := clirun.ChannelDefaults(g.caller(), defFlags)
			if err == nil {
				clirender.ChannelConfig(g.stdout, "", got, asJSON)
			}
			return err
		},
	}
	addChannelFlags(def, &defFlags, false)
	cmd.AddCommand(list, set, def)
	return cmd
}
