package attach

// SetSentForTest moves a rail's send position, to reach the end of the
// sequence space without sending 2^53 frames.
func (r *Rail) SetSentForTest(sent uint64) {
	r.mu.Lock()
	r.sent, r.acked = sent, sent
	r.mu.Unlock()
}

// MaxSafeInt is the last seq a rail may use.
const MaxSafeInt = maxSafeInt
