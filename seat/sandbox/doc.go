// Package sandbox keeps a seat away from what it must never read: the
// space's signing keys, the operator's and other seats' credentials, the
// minted-identity records and the stored messages.
//
// The cotal binary is its own launcher. The manager starts it with [Arg]
// as its first argument, in a new mount namespace when the kernel allows
// (and a new user namespace when not root); [Main], called first thing in
// main and in the TestMain of every test binary that spawns seats, then
// hides the protected directories under empty read-only mounts, binds the
// seat's own launch directory back, enters a Landlock domain (which keeps
// the seat from reaching other processes' /proc/<pid>/root, mem and
// environ), drops every capability and execs the agent. Where the mount
// namespace is refused it falls back to Landlock path rules, and only where
// those cannot work without breaking the agent does the seat run
// unsandboxed; the launcher tells the manager which through a pipe that
// closes when the agent starts, so a seat cannot rewrite the answer.
//
// It imports no other cotal package: it runs before anything else does.
package sandbox
