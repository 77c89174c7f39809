package keeper

import "time"

// ring keeps the newest output written while no manager is connected, up
// to its size, and counts what it had to drop. Only the keeper's detached
// reader writes it; take ends it.
type ring struct {
	buf     []byte // circular, len == size
	start   int    // where the oldest kept byte is
	n       int    // bytes kept
	dropped int64
	since   time.Time
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size), since: time.Now()} }

func (r *ring) write(p []byte) {
	size := len(r.buf)
	if len(p) >= size {
		r.dropped += int64(r.n + len(p) - size)
		copy(r.buf, p[len(p)-size:])
		r.start, r.n = 0, size
		return
	}
	if over := r.n + len(p) - size; over > 0 {
		r.dropped += int64(over)
		r.start = (r.start + over) % size
		r.n -= over
	}
	end := (r.start + r.n) % size
	c := copy(r.buf[end:], p)
	copy(r.buf, p[c:])
	r.n += len(p)
}

// take returns what is kept, oldest first, and the account of it.
func (r *ring) take() ([]byte, *Detached) {
	out := make([]byte, 0, r.n)
	if r.start+r.n <= len(r.buf) {
		out = append(out, r.buf[r.start:r.start+r.n]...)
	} else {
		out = append(out, r.buf[r.start:]...)
		out = append(out, r.buf[:(r.start+r.n)%len(r.buf)]...)
	}
	return out, &Detached{SinceMs: r.since.UnixMilli(), Kept: int64(r.n), Dropped: r.dropped}
}
