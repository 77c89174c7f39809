// Package ep is the Cotal control surface as plain values: endpoint rail subjects (built and
// parsed with the spec's exact arities), the reply rail derived from a request, the
// request/reply envelope with its error codes and outcomes, and RFC 8785 canonical JSON digests.
//
// It never touches a connection; the serving and calling code builds on it. It imports only the
// standard library and mesh/wire, and must never import a NATS client.
package ep
