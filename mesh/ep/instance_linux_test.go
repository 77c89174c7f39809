package ep_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep"
)

// TestInstanceFileWriteFailure: a failed write of a new instance file (the
// file-size limit here, as a full disk would) is an error and leaves no
// file behind, so the next start mints an id instead of refusing a
// truncated one forever. The write runs in a child process because the
// limit holds for the whole process.
func TestInstanceFileWriteFailure(t *testing.T) {
	if path := os.Getenv("COTAL_TEST_INSTANCE_FILE"); path != "" {
		lim := syscall.Rlimit{Cur: 8}
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &cur); err != nil {
			fmt.Println("getrlimit:", err)
			os.Exit(3)
		}
		lim.Max = cur.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		id, err := ep.LoadOrCreateInstanceID(path)
		fmt.Printf("id=%q err=%v\n", id, err)
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "instance.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestInstanceFileWriteFailure$")
	cmd.Env = append(os.Environ(), "COTAL_TEST_INSTANCE_FILE="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "err=writing instance file") {
		t.Errorf("a write cut short by the file-size limit was not reported as a failed write: %s", out)
	}
	if b, err := os.ReadFile(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed write left an instance file behind: %q (%v)", b, err)
	}
	if _, err := ep.LoadOrCreateInstanceID(path); err != nil {
		t.Errorf("the next start, with room to write, cannot start: %v", err)
	}
}
