//go:build !linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"
)

// launch on other systems says the seat is unsandboxed and execs the agent.
func launch(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "cotal: "+Arg+" is internal to the seat manager")
		return 2
	}
	f := os.NewFile(3, "report")
	if st, err := f.Stat(); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		b, _ := json.Marshal(unsandboxed("seat sandboxing needs Linux"))
		_, _ = f.Write(b)
		f.Close()
	}
	err := syscall.Exec(args[1], args[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "cotal: starting %s: %v\n", args[1], err)
	return 127
}

// ABI is the kernel's Landlock ABI version: none off Linux.
func ABI() int { return 0 }
