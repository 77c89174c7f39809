package clirender

import (
	"fmt"
	"io"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/render"
)

// UpJSON is `cotal up --detach --json`.
type UpJSON struct {
	Space          string `json:"space"`
	AlreadyRunning bool   `json:"alreadyRunning,omitempty"`
	URL            string `json:"url,omitempty"`
	PID            int    `json:"pid,omitempty"`
	Mode           string `json:"mode,omitempty"`
	Sync           string `json:"sync,omitempty"`
	ReadyMs        int64  `json:"readyMs,omitempty"` // how long the start took
	Store          string `json:"store,omitempty"`
	Log            string `json:"log"`
}

// Up says a mesh is up in this process: where, in which mode, its store.
func Up(w io.Writer, space, url string, pid int, open bool, store string, maxStore int64) {
	mode := "auth mode: per-agent credentials"
	if open {
		mode = "OPEN mode: no authentication, owner local; anyone on this machine can read and post as anyone"
	}
	fmt.Fprintf(w, "mesh %s up on %s (pid %d, %s)\n", space, url, pid, mode)
	fmt.Fprintf(w, "store %s (limit %s)\n", store, render.Bytes(maxStore))
}

// Lines prints each line.
func Lines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// Detached says a mesh started in the background is ready (took is how
// long that took) and in which mode.
func Detached(w io.Writer, space string, rec config.BrokerRecord, took time.Duration) {
	fmt.Fprintf(w, "mesh %s up on %s (pid %d, %s mode, sync %s) in %s\n", space, rec.URL, rec.PID, rec.Mode, rec.Sync, took.Round(time.Millisecond))
	if rec.Mode == config.ModeOpen {
		fmt.Fprintln(w, "OPEN mode: no authentication; anyone on this machine can read and post as anyone")
	}
}

// DetachedTail ends what Detached began: the warning its sync mode calls
// for, the lines custody says of its seats, where its log is.
func DetachedTail(w io.Writer, space string, rec config.BrokerRecord, logFile string, custody []string) {
	if rec.Sync == config.SyncInterval {
		fmt.Fprintln(w, "WARNING: --sync interval: an OS crash or power loss can lose messages the mesh already acknowledged")
	}
	Lines(w, custody)
	fmt.Fprintf(w, "log %s; stop it with `cotal down --space %s`\n", logFile, space)
}
