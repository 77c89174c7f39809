// Package ep is the Cotal control surface's runtime, on top of the grammar
// in mesh/ep/proto: the contract store, the server that registers and
// serves commands, the client that describes, calls, casts, scatters and
// probes, endpoint registrations, and goals with their durable facts.
//
// It imports nats.go for serving and calling; it never imports broker/,
// config/, seat/, tui/ or host/.
package ep
