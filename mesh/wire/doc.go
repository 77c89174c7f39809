// Package wire is the Cotal messaging contract as plain Go values: tokens,
// principals, profiles, channel names, subjects, JetStream names, the
// CotalMessage envelope, and the command names of the delivery and manager
// endpoints. It imports only the standard library and never touches a
// connection.
package wire
