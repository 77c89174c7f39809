package pty

import (
	"fmt"
	"testing"
)

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
