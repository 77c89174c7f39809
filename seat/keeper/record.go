package keeper

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cotal-go/cotal/internal/procid"
)

// Files of a keeper's directory (0700, under the run directory seats
// cannot see into).
const (
	planFile   = "plan.json"   // what to run; the keeper removes it once read (it holds the seat's environment)
	recordFile = "keeper.json" // Record: the keeper and its seat, written once the seat runs
	exitFile   = "exit.json"   // ExitRecord: how the seat ended, written before the keeper goes
	socketFile = "sock"        // where the keeper listens
	logFile    = "keeper.log"  // what the keeper says of itself
)

// Dir is the keeper directory of one seat under a run directory.
func Dir(runDir, name, uid string) string {
	return filepath.Join(Root(runDir), name+"-"+uid)
}

// Root holds every keeper directory of a run directory.
func Root(runDir string) string { return filepath.Join(runDir, "keep") }

// Plan is what a keeper runs: the seat's program in a pty, through the
// sandbox launcher when Launcher is set.
type Plan struct {
	Path  string   `json:"path"` // as exec resolves it
	Argv0 string   `json:"argv0"`
	Args  []string `json:"args,omitempty"`
	Env   []string `json:"env"`
	Dir   string   `json:"dir,omitempty"`
	Cols  int      `json:"cols,omitempty"`
	Rows  int      `json:"rows,omitempty"`
	// Launcher is the sandbox launcher (the cotal binary); "" runs the
	// program plainly.
	Launcher    string `json:"launcher,omitempty"`
	NoNamespace bool   `json:"noNamespace,omitempty"`
	// Ring bounds the output kept while no manager is connected; 0:
	// DefaultRing.
	Ring int `json:"ring,omitempty"`
}

// DefaultRing is how much output written while no manager is connected a
// keeper keeps (the newest); older output is dropped and counted.
const DefaultRing = 1 << 20

// Record is keeper.json: the keeper and its seat, each named by pid and
// start time, so nothing ever signals a reused pid.
type Record struct {
	V       int       `json:"v"`
	Keeper  procid.ID `json:"keeper"`
	Seat    procid.ID `json:"seat"`
	Started time.Time `json:"started"`
	Sandbox string    `json:"sandbox"`
	// Nested says why a sandbox of the seat's own cannot run inside it
	// (sandbox.Report.Nested); "" when it can.
	Nested string `json:"nested,omitempty"`
}

// ExitRecord is exit.json: how the seat ended, and its last lines.
type ExitRecord struct {
	Code   int       `json:"code"`
	Signal string    `json:"signal,omitempty"`
	At     time.Time `json:"at"`
	Tail   []string  `json:"tail,omitempty"`
}

// ReadRecord reads a keeper directory's keeper.json; its modification
// time is when the keeper last said it was alive (it refreshes it while
// no manager is connected).
func ReadRecord(dir string) (Record, time.Time, error) {
	var r Record
	path := filepath.Join(dir, recordFile)
	fi, err := os.Stat(path)
	if err != nil {
		return r, time.Time{}, err
	}
	err = readJSON(path, &r)
	return r, fi.ModTime(), err
}

// ReadExit reads a keeper directory's exit.json; fs.ErrNotExist when the
// seat's end was not recorded.
func ReadExit(dir string) (ExitRecord, error) {
	var x ExitRecord
	return x, readJSON(filepath.Join(dir, exitFile), &x)
}

// List names the keeper directories under a run directory.
func List(runDir string) ([]string, error) {
	ents, err := os.ReadDir(Root(runDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(Root(runDir), e.Name()))
		}
	}
	return out, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// writeJSONFile writes v to path atomically (a temp file renamed), 0600,
// synced.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// The socket lives in the keeper's directory, whose path may be longer
// than a socket address holds (108 bytes). Both ends name it through a
// descriptor of the directory (/proc/self/fd/N/sock), which is always
// short.

func listen(dir string) (net.Listener, *os.File, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	_ = os.Remove(filepath.Join(dir, socketFile))
	l, err := net.Listen("unix", viaFD(d))
	if err != nil {
		d.Close()
		return nil, nil, fmt.Errorf("listening in %s: %w", dir, err)
	}
	// The listener unlinks its path when closed; the descriptor must
	// outlive it.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	return l, d, nil
}

func dialDir(dir string, timeout time.Duration) (net.Conn, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return net.DialTimeout("unix", viaFD(d), timeout)
}

func viaFD(d *os.File) string {
	return "/proc/self/fd/" + strconv.Itoa(int(d.Fd())) + "/" + socketFile
}
