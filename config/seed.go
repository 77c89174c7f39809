package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// defaultPersona is the persona SeedProject writes: a Claude Code seat
// that may spawn others. It joins no channel at boot, and may join, read
// and post on any channel when it chooses to; every key an agent file may
// set is listed in comments.
var defaultPersona = `---
name: default
agent: claude
description: A general coding agent on the mesh.
capabilities: [spawn, run]
subscribe: []
allowSubscribe: [">"]
allowPublish: [">"]
` + personaKeyComments() + `---
You are a coding agent on a cotal mesh. Other agents and people can reach you
with direct messages, channel posts and tasks for your role; use the cotal
command (cotal inbox, cotal send dm|msg|ask, cotal roster) to read and answer.
`

// personaKeyComments lists every persona key as YAML comments, the
// README's table in another form.
func personaKeyComments() string {
	var b strings.Builder
	b.WriteString("# Every key an agent file may set (README: Seats):\n")
	for _, k := range PersonaKeys {
		fmt.Fprintf(&b, "#   %-15s %-6s %s\n", k.Key, k.Type, k.Meaning)
	}
	return b.String()
}

// SeedProject makes dir a cotal project: its agents folder and a default
// persona, default.md. Nothing that exists is overwritten: created is false
// when the persona was already there.
func SeedProject(dir string) (persona string, created bool, err error) {
	agents := AgentsDir(dir)
	if err := os.MkdirAll(agents, 0o755); err != nil {
		return "", false, fmt.Errorf("creating %s: %w", agents, err)
	}
	path := filepath.Join(agents, "default.md")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	switch {
	case errors.Is(err, fs.ErrExist):
		return path, false, nil
	case err != nil:
		return path, false, err
	}
	if _, err := f.WriteString(defaultPersona); err != nil {
		f.Close()
		return path, false, err
	}
	return path, true, f.Close()
}
