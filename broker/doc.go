// Package broker is a space's NATS server and its authority: the embedded
// nats-server with JetStream on the space's store (a loopback port, or
// in-process connections), the operator, system and space accounts whose
// keys sign every credential, user JWTs minted per principal with
// forge-locked permissions (perms.go), the revocation list signed into the
// account JWT and pushed through the system account, the streams, buckets
// and per-identity durables a space needs (Provision, ProvisionIdentity),
// and the store lock that says a process serves the space.
//
// No answer of the server lands where an agent aims it: the streams agents
// publish to acknowledge nothing and republish a stored notice on the
// sender's own subject instead (provision.go, storedNotices), and agents
// hold no JetStream right through which the server could answer them. One
// credential cannot exhaust what the space shares: connection and
// subscription limits in the JWTs and per credential, and a byte share of
// the store for every stream agents can fill (limits.go, streamShare).
//
// It imports config and mesh/wire only; never mesh, seat, tui or the host.
// The host, credential issuing and package main use it; mesh, seat and tui
// never do, since a client of a running mesh needs only a URL and a creds
// file.
package broker
