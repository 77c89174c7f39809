// Package worktree gives each seat a git worktree of its own: created under
// the project's .cotal/worktrees/<seat> on a branch of its own, claimed by
// one seat at a time, set up with files copied from the main checkout, and
// then looked at (status, diff), merged or rebased into its base in the main
// checkout, removed and pruned. It drives the git program (exec, never a
// library) and imports no package of this module.
//
// Every name that reaches git is checked first: a seat is one token of
// A-Z a-z 0-9 _, a branch passes `git check-ref-format` and never starts
// with '-', a base is resolved to a commit with --end-of-options, and git is
// handed full ref names (refs/heads/...) and absolute paths, so nothing a
// person or a seat writes is read as an option, and every worktree path
// stays inside .cotal/worktrees.
package worktree
