package tty

import (
	"fmt"
	"strings"
)

// DefaultDetachKey is Ctrl-] (0x1d), telnet's escape.
const DefaultDetachKey byte = 0x1d

// DetachKeyEnv names the environment variable that changes the detach key.
const DetachKeyEnv = "COTAL_DETACH_KEY"

// ctrlKeys are the control keys a detach key may be, by the character
// after ctrl- or ^. Those a terminal sends for Escape, Enter, Tab or
// Backspace are left out: detaching on them would end every session.
var ctrlKeys = func() map[byte]byte {
	m := map[byte]byte{'@': 0x00, '\\': 0x1c, ']': 0x1d, '^': 0x1e, '_': 0x1f}
	for c := byte('a'); c <= 'z'; c++ {
		switch c {
		case 'h', 'i', 'j', 'm':
			continue
		}
		m[c] = c & 0x1f
	}
	return m
}()

// ParseDetachKey reads a detach key as COTAL_DETACH_KEY spells it:
// ctrl-<c> or ^<c>, c a letter or one of @ \ ] ^ _ (case does not
// matter). "" is DefaultDetachKey.
func ParseDetachKey(s string) (byte, error) {
	if s == "" {
		return DefaultDetachKey, nil
	}
	rest, ok := strings.CutPrefix(strings.ToLower(s), "ctrl-")
	if !ok {
		rest, ok = strings.CutPrefix(s, "^")
	}
	if ok && len(rest) == 1 {
		if b, ok := ctrlKeys[strings.ToLower(rest)[0]]; ok {
			return b, nil
		}
	}
	return 0, fmt.Errorf("%s=%q: want ctrl-<c> or ^<c>, c a letter (not h, i, j or m: they are Backspace, Tab and Enter) or one of @ \\ ] ^ _; the default is ctrl-]", DetachKeyEnv, s)
}

// KeyName is how the notes name a detach key: Ctrl-].
func KeyName(b byte) string {
	for c, k := range ctrlKeys {
		if k == b {
			return "Ctrl-" + strings.ToUpper(string(c))
		}
	}
	return fmt.Sprintf("0x%02x", b)
}
