package cliargs

import "testing"

func TestTrimNewlineKeepsTheText(t *testing.T) {
	for in, want := range map[string]string{"hi\n": "hi", "hi\r\n": "hi", "a\nb\n\n": "a\nb", "  x": "  x", "": ""} {
		if got := trimNewline([]byte(in)); got != want {
			t.Errorf("trimNewline(%q) = %q, want %q", in, got, want)
		}
	}
}
