package clirender

import (
	"fmt"
	"io"
)

// MCPConfig prints `cotal mcp config`: what to add to the client's
// configuration, or as JSON the command that runs the server too.
func MCPConfig(w io.Writer, client string, argv []string, instructions string, asJSON bool) {
	if asJSON {
		JSON(w, map[string]any{"client": client, "command": argv[0], "args": argv[1:], "instructions": instructions})
		return
	}
	fmt.Fprint(w, instructions)
}
