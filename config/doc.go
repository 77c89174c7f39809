// Package config says where cotal keeps things: the data directory, one store
// directory per space, the record of each space's mesh (broker.json), the
// default space chosen with `cotal use`, and how a space name is resolved.
//
// It is a leaf: it imports nothing of this module but the pure wire grammar,
// so every other package may use it.
package config
