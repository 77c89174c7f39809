package keeper

// RefuseMaster has Dial refuse the pty master keepers hand over, until the
// returned func restores it.
func RefuseMaster() func() {
	noMaster = true
	return func() { noMaster = false }
}

// HasMaster reports whether c types into the seat's pty directly.
func (c *Conn) HasMaster() bool { return c.master.Load() != nil }
