package wire

import (
	"crypto/rand"
	"encoding/hex"
)

// uidAlphabet is base36 in lowercase, the lifecycle-UID alphabet.
const uidAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// uidLength gives 26 base36 characters, about 134 bits of randomness.
const uidLength = 26

// uidCutoff is the largest multiple of 36 that fits in a byte; bytes at or above it are redrawn so every character is equally likely.
const uidCutoff = 256 - 256%len(uidAlphabet)

// NewLifecycleUID mints the name of one incarnation of a principal; it is never reused, so it must be unguessable.
func NewLifecycleUID() string {
	out := make([]byte, 0, uidLength)
	var buf [32]byte
	for len(out) < uidLength {
		rand.Read(buf[:]) // never fails since Go 1.24
		for _, b := range buf {
			if int(b) >= uidCutoff {
				continue
			}
			out = append(out, uidAlphabet[int(b)%len(uidAlphabet)])
			if len(out) == uidLength {
				break
			}
		}
	}
	return string(out)
}

// ValidLifecycleUID accepts the 26-32 lowercase base36 characters the spec allows, including UIDs minted by other implementations.
func ValidLifecycleUID(s string) bool {
	if len(s) < 26 || len(s) > 32 {
		return false
	}
	return AllBytes(s, func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' })
}

// NewID mints a random UUID v4 for a message id, which also serves as the JetStream dedup key.
func NewID() string {
	var u [16]byte
	rand.Read(u[:]) // never fails since Go 1.24
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], u[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], u[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], u[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], u[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], u[10:16])
	return string(out[:])
}
