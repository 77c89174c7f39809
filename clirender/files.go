package clirender

import (
	"fmt"
	"io"
)

// Written says, for each file a command seeds, whether it was created or
// kept because it existed, then the lines then (what is there, what to do
// next).
func Written(w io.Writer, paths []string, created []bool, then ...string) {
	for i, path := range paths {
		if created[i] {
			fmt.Fprintf(w, "created %s\n", path)
		} else {
			fmt.Fprintf(w, "kept %s (it exists)\n", path)
		}
	}
	for _, l := range then {
		fmt.Fprintln(w, l)
	}
}
