// Command fakeagent stands in for a coding agent in the end-to-end tests.
// Run as a seat, it starts `cotal mcp` as its MCP server the way a
// harness does (which makes the seat ready), reads the blocks the seat's
// connector injects into its terminal, and answers every DM through the
// cotal_dm tool with "done: " and the DM's text. With FAKEAGENT_STAMPS set
// it appends "<unix ns> <text>" to that file the moment it reads a DM's
// line, and answers nothing (a benchmark's reader).
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// dmLine is a DM's line in an injected block: the sender's name (a role
// may follow a slash), then the text.
var dmLine = regexp.MustCompile(`\[DM from ([^\]/ ]+)(?:/[^\]]*)?\] (.*)$`)

func main() {
	ctx := context.Background()
	cl := sdk.NewClient(&sdk.Implementation{Name: "fakeagent", Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	server := exec.Command("cotal", "mcp")
	server.Stderr = os.Stderr // its complaints show on the seat's screen
	cs, err := cl.Connect(cctx, &sdk.CommandTransport{Command: server}, nil)
	cancel()
	if err != nil {
		fmt.Println("fakeagent: starting cotal mcp:", err)
		os.Exit(1)
	}
	defer cs.Close()
	fmt.Println("fakeagent: ready")
	stamps := os.Getenv("FAKEAGENT_STAMPS")
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.NewReplacer("\x1b[200~", "", "\x1b[201~", "").Replace(sc.Text())
		m := dmLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		from, text := m[1], strings.TrimSpace(m[2])
		if stamps != "" {
			stamp(stamps, text)
			continue
		}
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := cs.CallTool(tctx, &sdk.CallToolParams{Name: "cotal_dm", Arguments: map[string]any{"to": from, "text": "done: " + text}})
		cancel()
		switch {
		case err != nil:
			fmt.Println("fakeagent: cotal_dm:", err)
		case res.IsError:
			fmt.Println("fakeagent: cotal_dm refused:", content(res))
		default:
			fmt.Println("fakeagent: replied to", from)
		}
	}
}

// stamp records when a DM's line was read.
func stamp(path, text string) {
	at := time.Now().UnixNano()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Println("fakeagent: stamps:", err)
		return
	}
	fmt.Fprintf(f, "%d %s\n", at, text)
	f.Close()
}

func content(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}
