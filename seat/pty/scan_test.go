package pty

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// The scanner hands on each read up to its last clean edge, keeps the rest
// back for the next, and follows the modes and queries in what it hands on.
func TestModeScanner(t *testing.T) {
	tests := []struct {
		name    string
		reads   []string
		chunks  string // the chunks handed on, joined by "|"; the rest is held
		modes   string // the modes after, as fmt prints a map
		queries string
	}{
		{"DEC set", []string{"a\x1b[?2004hb"}, "a\x1b[?2004hb", "map[2004:true]", ""},
		{"several in one", []string{"\x1b[?1;1049h\x1b[?1l"}, "\x1b[?1;1049h\x1b[?1l", "map[1:false 1049:true]", ""},
		{"ANSI mode", []string{"\x1b[4h\x1b[20l"}, "\x1b[4h\x1b[20l", "map[-20:false -4:true]", ""},
		{"cut after ESC", []string{"x\x1b", "[?1h"}, "x|\x1b[?1h", "map[1:true]", ""},
		{"cut in params", []string{"a\x1b[?20", "04hb"}, "a|\x1b[?2004hb", "map[2004:true]", ""},
		{"cut three ways", []string{"\x1b[", "?", "25l"}, "\x1b[?25l", "map[25:false]", ""},
		{"cut then not ours", []string{"\x1b", "x\x1b[?1h"}, "\x1bx\x1b[?1h", "map[1:true]", ""},
		{"other CSI ignored", []string{"\x1b[31m\x1b[2J\x1b[10;4H\x1b[?1$p"}, "\x1b[31m\x1b[2J\x1b[10;4H\x1b[?1$p", "map[]", "\x1b[?1$p"},
		{"RIS clears", []string{"\x1b[?1h\x1bc\x1b[?2004h"}, "\x1b[?1h\x1bc\x1b[?2004h", "map[2004:true]", ""},
		{"queries", []string{"\x1b[6n\x1b[c\x1b[>c\x1b[?6n\x1b[5n\x1b[0c"}, "\x1b[6n\x1b[c\x1b[>c\x1b[?6n\x1b[5n\x1b[0c", "map[]", "\x1b[6n\x1b[c\x1b[>c\x1b[?6n\x1b[5n\x1b[0c"},
		{"query cut", []string{"aaa\x1b[", "6nbbb", "ccc"}, "aaa|\x1b[6nbbb|ccc", "map[]", "\x1b[6n"},
		{"colour queries", []string{"\x1b]10;?\x07\x1b]11;?\x1b\\\x1b]12;?\x07\x1b]11;#000000\x07"}, "\x1b]10;?\x07\x1b]11;?\x1b\\\x1b]12;?\x07\x1b]11;#000000\x07", "map[]", "\x1b]10;?\x07\x1b]11;?\x1b\\\x1b]12;?\x07"},
		{"colour query cut in its ST", []string{"\x1b]11;?\x1b", "\\x"}, "\x1b]11;?\x1b\\x", "map[]", "\x1b]11;?\x1b\\"},
		{"not a mode: sub-parameters", []string{"\x1b[?1:2h"}, "\x1b[?1:2h", "map[]", ""},
		{"aborted by ESC", []string{"\x1b[?1\x1b[?7l"}, "\x1b[?1\x1b[?7l", "map[7:false]", ""},
		{"aborted by CAN", []string{"\x1b[?1\x18h\x1b[?7l"}, "\x1b[?1\x18h\x1b[?7l", "map[7:false]", ""},
		{"control inside CSI", []string{"\x1b[?20\n", "04h"}, "\x1b[?20\n04h", "map[2004:true]", ""},
		{"long mode list", []string{"\x1b[?" + strings.Repeat("1;", 40), "h"}, "\x1b[?" + strings.Repeat("1;", 40) + "h", "map[1:true]", ""},
		{"OSC cut", []string{"a\x1b]0;tit", "le\x07b"}, "a|\x1b]0;title\x07b", "map[]", ""},
		{"DCS cut", []string{"a\x1bP1$r", "q\x1b\\b"}, "a|\x1bP1$rq\x1b\\b", "map[]", ""},
		{"charset cut", []string{"a\x1b(", "Bb"}, "a|\x1b(Bb", "map[]", ""},
		{"rune cut", []string{"h\xc3", "\xa9llo"}, "h|\xc3\xa9llo", "map[]", ""},
		{"rune cut twice", []string{"\xe2", "\x82", "\xac!"}, "\xe2\x82\xac!", "map[]", ""},
		{"whole rune at the end", []string{"h\xc3\xa9", "x"}, "h\xc3\xa9|x", "map[]", ""},
		{"rune after a sequence", []string{"\x1b[1m\xf0\x9f", "\x98\x80"}, "\x1b[1m|\xf0\x9f\x98\x80", "map[]", ""},
		{"held to the end", []string{"a\x1b[3"}, "a", "map[]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc modeScanner
			st := &termState{modes: map[int]bool{}}
			var qs []byte
			var chunks []string
			for _, r := range tt.reads {
				c, ev, q := sc.scan([]byte(r), nil, nil)
				if len(c) > 0 {
					chunks = append(chunks, string(c))
				}
				st = st.with(ev)
				qs = append(qs, q...)
			}
			if got := strings.Join(chunks, "|"); got != tt.chunks {
				t.Errorf("chunks %q; want %q", got, tt.chunks)
			}
			if got, want := strings.Join(chunks, "")+string(sc.rest()), strings.Join(tt.reads, ""); got != want {
				t.Errorf("chunks and rest %q; want every byte read, %q", got, want)
			}
			if got := fmt.Sprint(st.modes); got != tt.modes {
				t.Errorf("modes %s; want %s", got, tt.modes)
			}
			if string(qs) != tt.queries {
				t.Errorf("queries %q; want %q", qs, tt.queries)
			}
		})
	}
}

// An unfinished sequence longer than maxHold is passed on as it comes, so
// the scanner never holds more than that.
func TestModeScannerHoldsAtMostMaxHold(t *testing.T) {
	var sc modeScanner
	var out []byte
	read := func(p string) {
		c, _, _ := sc.scan([]byte(p), nil, nil)
		out = append(out, c...)
		if len(sc.held) > maxHold {
			t.Fatalf("holds %d bytes", len(sc.held))
		}
	}
	read("a\x1b]52;c;")
	if string(out) != "a" {
		t.Fatalf("handed on %q; want a", out)
	}
	payload := strings.Repeat("QUJD", maxHold/4)
	read(payload)
	read(payload)
	read("\x07b")
	if want := "a\x1b]52;c;" + payload + payload + "\x07b"; !bytes.Equal(out, []byte(want)) || len(sc.held) != 0 {
		t.Errorf("handed on %d bytes, holding %d; want all %d", len(out), len(sc.held), len(want))
	}
}

// Gap queries cut to their bound keep only whole queries.
func TestNewestQueries(t *testing.T) {
	for _, tt := range []struct{ q, want string }{
		{"\x1b[c\x1b[6n", "\x1b[c\x1b[6n"},
		{"\x1b[c\x1b[6n\x1b[5n", "\x1b[6n\x1b[5n"},
		{"\x1b[6n\x1b]11;?\x1b\\", "\x1b]11;?\x1b\\"},
		{"\x1b]11;?\x1b\\\x1b[c", "\x1b[c"},
	} {
		if got := newestQueries([]byte(tt.q), 9); string(got) != tt.want {
			t.Errorf("newestQueries(%q, 9) = %q; want %q", tt.q, got, tt.want)
		}
	}
}

// A UTF-8 character in an OSC string is part of it, not its end: the
// string runs to its BEL (the title "✳ x" holds a 0x9c byte).
func TestSeqLenKeepsUTF8InAString(t *testing.T) {
	seq := "\x1b]0;\u2733 x\x07"
	if n, ok := seqLen([]byte(seq + "after")); !ok || n != len(seq) {
		t.Fatalf("seqLen of %q = %d, %v; want %d", seq, n, ok, len(seq))
	}
}

// The guard turns a string's C1-range bytes into '?', across writes, and
// leaves the rest alone: text, CSI sequences and what follows a string.
func TestStringGuard(t *testing.T) {
	var g stringGuard
	for _, tc := range []struct{ in, want string }{
		{"\x1b]0;\u2733 C\x07\u259b", "\x1b]0;\xe2?\xb3 C\x07\u259b"},
		{"\x1b]2;a\xe2", "\x1b]2;a\xe2"},
		{"\x9c\xb3 b\x1b\\\u259b", "?\xb3 b\x1b\\\u259b"},
		{"\x1bP\x9c\x18\u259b", "\x1bP?\x18\u259b"},
		{"\x1b", "\x1b"},
		{"]\x9d\x07\x1b[1m\x9d", "]?\x07\x1b[1m\x9d"},
	} {
		if got := string(g.filter([]byte(tc.in))); got != tc.want {
			t.Errorf("filter(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
