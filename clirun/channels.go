package clirun

import (
	"context"
	"errors"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// ChannelFlags are the registry fields a set or default command may
// change, as typed; "" leaves one as it is.
type ChannelFlags struct {
	Replay, Window, Class, Description, Instructions string
}

// patch is the flags as a registry patch; a value the registry does not
// take is bad input.
func (f ChannelFlags) patch() (mesh.ChannelConfig, error) {
	p := mesh.ChannelConfig{ReplayWindow: f.Window, DeliveryClass: f.Class, Description: f.Description, Instructions: f.Instructions}
	var err error
	if p.Replay, err = mesh.ParseReplay(f.Replay); err != nil {
		return p, usagef("--%v", err)
	}
	if err := p.Validate(); err != nil {
		return p, bad(err)
	}
	return p, nil
}

// Channels lists every registered or used channel with its effective
// settings, and the space defaults.
func Channels(c Caller) (rows []mesh.ChannelRow, def *mesh.ChannelConfig, err error) {
	err = c.OneShot(mesh.Options{}, func(ctx context.Context, e *mesh.Endpoint) error {
		rows, def, err = e.ListChannels(ctx)
		return err
	})
	return rows, def, err
}

// SetChannel registers a channel or merges f into its settings, and
// returns what is set after; no flag, or a bad one, is bad input.
func SetChannel(c Caller, channel string, f ChannelFlags) (*mesh.ChannelConfig, error) {
	if err := wire.ValidateConcreteChannel(channel); err != nil {
		return nil, bad(err)
	}
	p, err := f.patch()
	if err != nil {
		return nil, err
	}
	if f == (ChannelFlags{}) {
		return nil, usagef("nothing to set: give --replay, --window, --class, --description or --instructions")
	}
	return writeRegistry(c, channel, p)
}

// ChannelDefaults merges f into the space defaults every channel falls
// back to, or with no flag reads them.
func ChannelDefaults(c Caller, f ChannelFlags) (*mesh.ChannelConfig, error) {
	p, err := f.patch()
	if err != nil {
		return nil, err
	}
	if f != (ChannelFlags{}) {
		return writeRegistry(c, "", p)
	}
	var d *mesh.ChannelConfig
	err = c.OneShot(mesh.Options{}, func(ctx context.Context, e *mesh.Endpoint) error {
		reg, err := e.Registry(ctx)
		if err != nil {
			return err
		}
		d, err = reg.Defaults(ctx)
		return err
	})
	return d, err
}

// writeRegistry merges p into a channel's registry entry, or into the
// space defaults when channel is "", and returns what is set after.
func writeRegistry(c Caller, channel string, p mesh.ChannelConfig) (*mesh.ChannelConfig, error) {
	var got mesh.ChannelConfig
	err := c.OneShot(mesh.Options{}, func(ctx context.Context, e *mesh.Endpoint) error {
		reg, err := e.Registry(ctx)
		if err != nil {
			return err
		}
		got, err = reg.Set(ctx, channel, p)
		if errors.Is(err, mesh.ErrBadChannelConfig) {
			return bad(err)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &got, nil
}
