// Package wire is the Cotal messaging contract as plain Go values: tokens, principals, channel names, subjects, JetStream names and the CotalMessage envelope. It imports only the standard library and never touches a connection.
package wire
