// Package presence is the Cotal presence plane: one writer per key,
// heartbeating every 2 s into the presence KV bucket, and a roster watcher
// that derives offline peers only while its own watch is live.
//
// Every fact the watcher hands out carries a time (the record's heartbeat,
// the local time it was heard, when its status began, when the view went
// stale) so a reader can show its age instead of asserting it is current.
//
// It imports nats.go, nats.go/jetstream and mesh/wire only, and must never
// import seat, tui, host or broker.
package presence
