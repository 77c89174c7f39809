// Package launch is what the commands that start, follow and stop a
// space's mesh do between their flags and their last line of output:
// `cotal up` in the foreground and in the background (the child it
// starts, the flags it passes on, what custody made of the kept seats),
// `up -f` and `down -f` over manifest/apply, `down` with its seats rule,
// `down --preserve-state` and `up --fresh`, `supervise`, and the bare
// `cotal` dashboard hosting the mesh or following it through restarts;
// with them the commands that read how spaces stand (status, meshes, use,
// plan, topology) and make a folder ready for one (setup, init).
//
// It holds the rules of those commands (which flags go together, when the
// mesh is started in the background first, what a closed terminal leaves
// running, when a quit signal stops a mesh with live seats: HostQuit);
// the host holds the process, manifest/apply the plan, tui the
// screen, clirender the words. It prints, through clirender, what a person
// reads while a command waits or steps; main prints the result. Nothing
// below main imports it.
package launch
