package presence

// HoldDeliveries makes w consume nothing from its watch until release is
// called, so a test can look at the view before the replay is consumed.
// Call it before Start.
func HoldDeliveries(w *Watcher) (release func()) {
	w.hold = make(chan struct{})
	return func() { close(w.hold) }
}

// HoldRebind stops w from rebinding its watch while held, so a test can
// look at a stale view before a rebind replaces it.
func HoldRebind(w *Watcher, held bool) { w.rebindHeld.Store(held) }
