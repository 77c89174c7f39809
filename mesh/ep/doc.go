// Package ep is the Cotal control surface: endpoint rail subjects (built and
// parsed with the spec's exact arities), the reply rail derived from a
// request, the request/reply envelope with its error codes and outcomes,
// RFC 8785 canonical JSON digests and the contract store, and on top of them
// the server that registers and serves commands, the client that describes,
// calls, casts, scatters and probes, and goals with their durable facts.
//
// It imports nats.go for serving and calling; it never imports broker/,
// config/, seat/, tui/ or host/.
package ep
