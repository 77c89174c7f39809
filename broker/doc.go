// Package broker is a space's NATS server and its authority: the embedded
// nats-server with JetStream on the space's store (a loopback port, or
// in-process connections), the operator, system and space accounts whose
// keys sign every credential, user JWTs minted per principal with
// forge-locked permissions (perms.go), the revocation list signed into the
// account JWT and pushed through the system account, the streams, buckets
// and per-identity durables a space needs (Provision, ProvisionIdentity),
// and the store lock that says a process serves the space.
//
// It imports config and mesh/wire only; never mesh, seat, tui or the host.
// The host, credential issuing and package main use it; mesh, seat and tui
// never do, since a client of a running mesh needs only a URL and a creds
// file.
package broker
