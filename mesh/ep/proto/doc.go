// Package proto is the Cotal control surface's grammar, apart from its
// runtime: endpoint rail subjects (built and parsed with the spec's exact
// arities) and the reply rail derived from a request, the request/reply
// envelope with its error codes and outcomes, the checks a server makes
// on a request before running it, RFC 8785 canonical JSON and digests,
// contract documents, and JSON Schemas generated from Go types and
// compiled closed.
//
// It never touches NATS: it imports mesh/wire and nothing else of the
// module. mesh/ep serves and calls with it.
package proto
