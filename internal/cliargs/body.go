package cliargs

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
)

// maxBodyRead bounds what a send reads from standard input or a file; the
// mesh's own limit, known once connected, is far below it.
const maxBodyRead = 64 << 20

// MessageBody is the text a send verb sends: the words after its target,
// standard input for a lone "-", or --file. It refuses an ambiguous source
// and an empty or whitespace-only text before anything connects; reading
// a terminal's standard input, it says so on stderr.
func MessageBody(cmd *cobra.Command, words []string, file string, stdin io.Reader, stderr io.Writer) (string, error) {
	fromStdin := len(words) == 1 && words[0] == "-"
	var (
		text string
		from string
	)
	switch {
	case file != "" && fromStdin:
		return "", Usagef("%s: give the message once: --file or -, not both", ShortPath(cmd))
	case file != "" && len(words) > 0:
		return "", Usagef("%s: --file gives the message; drop the words after the target (%q)", ShortPath(cmd), strings.Join(words, " "))
	case len(words) > 1 && words[0] == "-":
		return "", Usagef("%s: - reads the message from standard input and takes no other words (quote the text to send a dash)", ShortPath(cmd))
	case file != "":
		b, err := readBounded(ShortPath(cmd), file, nil)
		if err != nil {
			return "", err
		}
		text, from = trimNewline(b), file
	case fromStdin:
		if f, ok := stdin.(*os.File); ok && term.IsTerminal(f.Fd()) {
			fmt.Fprintln(stderr, "reading the message from standard input; end it with Ctrl-D")
		}
		b, err := readBounded(ShortPath(cmd), "standard input", stdin)
		if err != nil {
			return "", err
		}
		text, from = trimNewline(b), "standard input"
	case len(words) == 0:
		return "", Missing(cmd, 1)
	default:
		text = strings.Join(words, " ")
	}
	if strings.TrimSpace(text) == "" {
		if from != "" {
			return "", Usagef("%s: the message from %s is empty; nothing was sent", ShortPath(cmd), from)
		}
		return "", Usagef("%s: the message is empty; nothing was sent", ShortPath(cmd))
	}
	return text, nil
}

// readBounded reads a message source whole for the command at path,
// refusing one past maxBodyRead; r nil opens name as a file.
func readBounded(path, name string, r io.Reader) ([]byte, error) {
	if r == nil {
		f, err := os.Open(name)
		if err != nil {
			return nil, Usagef("%s: --file %s: %s", path, name, config.OpenProblem(err))
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, Usagef("%s: --file %s: is a directory", path, name)
		}
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxBodyRead+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the message from %s: %w", path, name, err)
	}
	if len(b) > maxBodyRead {
		return nil, Usagef("%s: the message from %s is over %d MiB; nothing was sent", path, name, maxBodyRead>>20)
	}
	return b, nil
}

// trimNewline drops the line ending a file or a pipe ends with.
func trimNewline(b []byte) string {
	return strings.TrimRight(string(b), "\r\n")
}
