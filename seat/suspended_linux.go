package seat

import (
	"fmt"
	"os"
	"strings"
)

// suspended reports whether the process pid is stopped by a signal
// (state T in /proc/<pid>/stat; t is a tracer's stop, not a person's).
func suspended(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && strings.HasPrefix(string(b[i+1:]), " T")
}
