package pty

import (
	"fmt"
	"strings"
	"testing"
)

func TestModeScanner(t *testing.T) {
	tests := []struct {
		name    string
		chunks  []string
		modes   string // the modes after, as fmt prints a map
		queries string
	}{
		{"DEC set", []string{"a\x1b[?2004hb"}, "map[2004:true]", ""},
		{"several in one", []string{"\x1b[?1;1049h\x1b[?1l"}, "map[1:false 1049:true]", ""},
		{"ANSI mode", []string{"\x1b[4h\x1b[20l"}, "map[-20:false -4:true]", ""},
		{"cut after ESC", []string{"x\x1b", "[?1h"}, "map[1:true]", ""},
		{"cut in params", []string{"\x1b[?20", "04h"}, "map[2004:true]", ""},
		{"cut three ways", []string{"\x1b[", "?", "25l"}, "map[25:false]", ""},
		{"cut then not ours", []string{"\x1b", "x\x1b[?1h"}, "map[1:true]", ""},
		{"other CSI ignored", []string{"\x1b[31m\x1b[2J\x1b[10;4H\x1b[?1$p"}, "map[]", "\x1b[?1$p"},
		{"RIS clears", []string{"\x1b[?1h\x1bc\x1b[?2004h"}, "map[2004:true]", ""},
		{"queries", []string{"\x1b[6n\x1b[c\x1b[>c\x1b[?6n\x1b[5n\x1b[0c"}, "map[]", "\x1b[6n\x1b[c\x1b[>c\x1b[?6n\x1b[5n\x1b[0c"},
		{"query cut", []string{"\x1b[", "6n"}, "map[]", "\x1b[6n"},
		{"not a mode: sub-parameters", []string{"\x1b[?1:2h"}, "map[]", ""},
		{"aborted by ESC", []string{"\x1b[?1\x1b[?7l"}, "map[7:false]", ""},
		{"too long to follow", []string{"\x1b[?" + strings.Repeat("1;", 40), "h"}, "map[]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc modeScanner
			st := &termState{modes: map[int]bool{}}
			var qs []byte
			for _, c := range tt.chunks {
				ev, q := sc.scan([]byte(c), nil, nil)
				st = st.with(ev)
				qs = append(qs, q...)
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

func TestTermStateRestoreAltScreenFirst(t *testing.T) {
	st := &termState{modes: map[int]bool{25: false, 1049: true, 2004: true, 1048: true, -4: true, 7: false}}
	want := "\x1b[?1049h\x1b[4h\x1b[?7l\x1b[?25l\x1b[?2004h"
	if got := string(st.restore()); got != want {
		t.Errorf("restore %q; want %q", got, want)
	}
	if got := fmt.Sprint(st.repaintModes()); got != "[2004]" {
		t.Errorf("repaint modes %s; want [2004]", got)
	}
}
