package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Clients are the MCP clients ClientConfig knows.
var Clients = []string{"claude", "codex", "opencode"}

// ServerName is the name the server is registered under in a client.
const ServerName = "cotal"

// Command is the command line an MCP client starts the server with: exe
// (the cotal binary, by absolute path) acting as creds (an absolute path),
// or with none as name (in space) on an open mesh, at server when set.
func Command(exe, creds, name, space, server, tlsPin, tlsCA string) ([]string, error) {
	argv := []string{exe, "mcp"}
	switch {
	case creds != "":
		argv = append(argv, "--creds", creds)
	case name != "":
		argv = append(argv, "--name", name)
		if space != "" {
			argv = append(argv, "--space", space)
		}
	default:
		return nil, fmt.Errorf("say who the agent is: --creds FILE (mint one with `cotal mint <name>`), or --name on an open mesh")
	}
	if server != "" {
		argv = append(argv, "--server", server)
	}
	if tlsPin != "" {
		argv = append(argv, "--tls-pin", tlsPin)
	}
	if tlsCA != "" {
		abs, err := filepath.Abs(tlsCA)
		if err != nil {
			return nil, err
		}
		argv = append(argv, "--tls-ca", abs)
	}
	return argv, nil
}

// ClientConfig is what to add to one MCP client's configuration so that it
// starts argv (the cotal binary, by absolute path, and its arguments) as
// the server named cotal: the client's own command line first, then the
// configuration-file stanza. Everything in it is meant to be copied as is.
func ClientConfig(client string, argv []string) (string, error) {
	if len(argv) == 0 {
		return "", fmt.Errorf("no command to configure")
	}
	var b strings.Builder
	switch client {
	case "claude":
		b.WriteString("# Claude Code: run this in your project (with -s user after add, it is yours in every project):\n")
		b.WriteString("claude mcp add " + ServerName + " -- " + shellJoin(argv) + "\n\n")
		b.WriteString("# or put this in the project's .mcp.json:\n")
		b.WriteString(jsonText(claudeFile{MCPServers: map[string]claudeServer{ServerName: {Command: argv[0], Args: nonNil(argv[1:])}}}))
	case "codex":
		b.WriteString("# Codex: run this once:\n")
		b.WriteString("codex mcp add " + ServerName + " -- " + shellJoin(argv) + "\n\n")
		b.WriteString("# or put this in ~/.codex/config.toml:\n")
		b.WriteString("[mcp_servers." + ServerName + "]\n")
		b.WriteString("command = " + tomlString(argv[0]) + "\n")
		b.WriteString("args = " + tomlArray(argv[1:]) + "\n\n")
		b.WriteString("# or pass it for one run:\n")
		b.WriteString("codex -c " + shellQuote("mcp_servers."+ServerName+".command="+tomlString(argv[0])) +
			" -c " + shellQuote("mcp_servers."+ServerName+".args="+tomlArray(argv[1:])) + "\n")
	case "opencode":
		b.WriteString("# opencode: put this in opencode.json (the project's) or ~/.config/opencode/opencode.json:\n")
		b.WriteString(jsonText(opencodeFile{Schema: "https://opencode.ai/config.json",
			MCP: map[string]opencodeServer{ServerName: {Type: "local", Command: argv, Enabled: true}}}))
	default:
		return "", fmt.Errorf("unknown client %q: use %s", client, strings.Join(Clients, ", "))
	}
	return b.String(), nil
}

// The clients' configuration files, fields in the order their docs show.
type (
	claudeFile struct {
		MCPServers map[string]claudeServer `json:"mcpServers"`
	}
	claudeServer struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	opencodeFile struct {
		Schema string                    `json:"$schema"`
		MCP    map[string]opencodeServer `json:"mcp"`
	}
	opencodeServer struct {
		Type    string   `json:"type"`
		Command []string `json:"command"`
		Enabled bool     `json:"enabled"`
	}
)

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// jsonText is v as indented JSON, HTML characters unescaped, with a
// trailing newline.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return b.String()
}

// tomlString is s as a TOML basic string; JSON's string escapes are all
// valid TOML escapes.
func tomlString(s string) string {
	return strings.TrimSuffix(jsonText(s), "\n")
}

func tomlArray(l []string) string {
	parts := make([]string, len(l))
	for i, s := range l {
		parts[i] = tomlString(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// shellJoin quotes each word for a POSIX shell.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}

// shellQuote leaves a word that needs no quoting alone and single-quotes
// any other.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
