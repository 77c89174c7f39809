// Package app is the mesh process as one value: it locks a space, starts
// the embedded broker, provisions the space, publishes broker.json for
// clients and, on Close, takes it all down in order. main wires signals to
// its context and nothing else.
package app
