package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// StarterPersona is the persona `cotal init` writes beside the starter
// manifest (as .cotal/agents/<StarterPersona>.md).
const StarterPersona = "lead"

// Starter is the commented cotal.yaml `cotal init` writes for space.
func Starter(space string) string {
	return fmt.Sprintf(`# The mesh of this folder in one file. "cotal plan" shows what
# "cotal up -f cotal.yaml" would do; "cotal down -f cotal.yaml" stops what it
# started. Unknown keys, names that resolve to nothing and values of the
# wrong type are refused with their line and column before anything starts.
apiVersion: cotal/v1
kind: Mesh
space: %s            # one space per file

# broker:
#   auth: false      # open mode: no credentials at all (default: per-agent credentials)

defaults:
  deliveryClass: durable   # posts wait for members who are away (live: only those listening)
  # replay: true           # a joiner gets the history
  # replayWindow: 24h      # ...this far back

agents:
  %s: %s             # its agent file, .cotal/agents/%s.md
  # helper:          # an agent written here instead:
  #   agent: claude  # claude, codex, opencode, or command (with command: and args:)
  #   model: sonnet
  #   role: helper   # tasks for "helper" reach it
  #   instructions: You help the lead with reviews.   # its system prompt
  #   prompt: Say hello on general.                   # the first message it is sent
  #   capabilities: [spawn]
  #   count: 2       # two seats, helper_1 and helper_2
  # reviewer:
  #   persona: lead  # an agent file with keys changed
  #   model: opus

# Who may read and post where. Each list names agents of this file; an agent
# may post only where an allowPublish lists it.
channels:
  general:
    description: the whole team
    subscribe: [%s]        # joined at start, and so readable
    allowPublish: [%s]     # may post
    # allowSubscribe: []   # may read without joining at start
`, space, StarterPersona, StarterPersona, StarterPersona, StarterPersona, StarterPersona)
}

// StarterPersonaFile is the persona file `cotal init` writes.
const StarterPersonaFile = `---
name: lead
agent: claude
description: Leads the work in this folder.
capabilities: [spawn]
---
You lead the work in this folder on a cotal mesh. Other agents and people
reach you with direct messages, channel posts and tasks; use the cotal tools
(or the cotal command: cotal inbox, cotal send dm|msg|ask, cotal roster) to
read and answer. Which channels you may read and post on is set in the
folder's cotal.yaml.
`

// SpaceFor is the space a folder named base gets: its name made a token.
func SpaceFor(base string) string {
	s := wire.SanitizeToken(base)
	if len(s) > wire.MaxTokenLength {
		s = s[:wire.MaxTokenLength]
	}
	if s == "" || wire.ValidSpace(s) != nil {
		return "default"
	}
	return s
}

// Started is what WriteStarter wrote: each file, and whether it was
// written (false: it existed and was kept).
type Started struct {
	Manifest        string `json:"manifest"`
	ManifestCreated bool   `json:"manifestCreated"`
	Persona         string `json:"persona"`
	PersonaCreated  bool   `json:"personaCreated"`
	Space           string `json:"space"`
}

// WriteStarter writes the starter manifest for space and its persona into
// dir, never over a file that exists.
func WriteStarter(dir, space string) (Started, error) {
	r := Started{Space: space, Manifest: filepath.Join(dir, FileName),
		Persona: filepath.Join(config.AgentsDir(dir), StarterPersona+".md")}
	if err := os.MkdirAll(config.AgentsDir(dir), 0o755); err != nil {
		return r, fmt.Errorf("creating %s: %w", config.AgentsDir(dir), err)
	}
	var err error
	if r.ManifestCreated, err = writeNew(r.Manifest, Starter(space)); err != nil {
		return r, err
	}
	r.PersonaCreated, err = writeNew(r.Persona, StarterPersonaFile)
	return r, err
}

func writeNew(path, body string) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}
