// Package procid names a process by its pid and its start time, so that a
// signal meant for it never reaches another process that was given the
// same pid later. It reads Linux's /proc and signals through a pidfd; it
// imports no package of this module.
package procid

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrGone is returned by Signal when no process has the identity any
// more: it ended, and its pid is free or another process's.
var ErrGone = errors.New("procid: the process is gone")

// ID is one process: its pid and its start time in clock ticks after boot
// (field 22 of /proc/<pid>/stat). Start 0 means it was not known: then
// the pid alone names it, as a last resort.
type ID struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start,omitempty"`
}

func (id ID) String() string { return fmt.Sprintf("pid %d, start %d", id.PID, id.Start) }

// stat is what /proc/<pid>/stat says of one process.
type stat struct {
	state   byte
	ppid    int
	session int
	start   uint64
}

func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	s := string(b)
	// The command name may hold spaces and parentheses: cut at the last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("procid: /proc/%d/stat is garbled", pid)
	}
	// After the name: state (3), ppid (4), pgrp (5), session (6), ...,
	// starttime (22).
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, fmt.Errorf("procid: /proc/%d/stat is garbled", pid)
	}
	var st stat
	st.state = f[0][0]
	st.ppid, _ = strconv.Atoi(f[1])
	st.session, _ = strconv.Atoi(f[3])
	st.start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("procid: /proc/%d/stat start time: %w", pid, err)
	}
	return st, nil
}

// Of is the identity of the running process pid.
func Of(pid int) (ID, error) {
	st, err := readStat(pid)
	if err != nil {
		return ID{}, err
	}
	return ID{PID: pid, Start: st.start}, nil
}

// Self is this process.
func Self() ID {
	id, err := Of(os.Getpid())
	if err != nil {
		return ID{PID: os.Getpid()}
	}
	return id
}

// Alive reports whether the process runs: its pid exists, started when
// recorded, and is no zombie.
func (id ID) Alive() bool {
	if id.PID <= 0 {
		return false
	}
	st, err := readStat(id.PID)
	if err != nil {
		return false
	}
	return st.state != 'Z' && st.state != 'X' && (id.Start == 0 || st.start == id.Start)
}

// Waiting reports whether the process runs and every thread of it sleeps
// waiting for something (state S): a program that drew and now waits for
// input, not one still computing, writing to disk or exiting.
func (id ID) Waiting() bool {
	if !id.Alive() {
		return false
	}
	dir := "/proc/" + strconv.Itoa(id.PID) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return false
	}
	for _, de := range ents {
		b, err := os.ReadFile(dir + "/" + de.Name() + "/stat")
		if err != nil {
			return false // a thread that just ended: ask again later
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || b[i+2] != 'S' {
			return false
		}
	}
	return true
}

// Signal sends sig to exactly this process. The pid is pinned with a pidfd
// first and its start time checked after, so a pid reused in between is
// never signalled: that is ErrGone, as is a process that has ended.
func (id ID) Signal(sig syscall.Signal) error {
	if id.PID <= 0 {
		return ErrGone
	}
	fd, err := unix.PidfdOpen(id.PID, 0)
	if errors.Is(err, unix.ESRCH) {
		return ErrGone
	}
	if err != nil {
		return fmt.Errorf("procid: pinning %s: %w", id, err)
	}
	defer unix.Close(fd)
	if st, err := readStat(id.PID); err != nil || (id.Start != 0 && st.start != id.Start) {
		return ErrGone
	}
	if err := unix.PidfdSendSignal(fd, sig, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return ErrGone
		}
		return fmt.Errorf("procid: signal %d to %s: %w", sig, id, err)
	}
	return nil
}

// Session lists the live processes of session sid, but its leader.
func Session(sid int) []ID {
	return scan(func(pid int, st stat) bool { return st.session == sid && pid != sid })
}

// Descendants lists the live processes below pid (its children, theirs,
// ...).
func Descendants(pid int) []ID {
	parent := map[int]int{}
	starts := map[int]uint64{}
	scan(func(p int, st stat) bool {
		parent[p], starts[p] = st.ppid, st.start
		return false
	})
	var out []ID
	for p := range parent {
		for q := parent[p]; q > 0; q = parent[q] {
			if q == pid {
				out = append(out, ID{PID: p, Start: starts[p]})
				break
			}
			if _, ok := parent[q]; !ok {
				break
			}
		}
	}
	return out
}

// scan reads every process's stat and keeps those keep accepts, zombies
// left out.
func scan(keep func(pid int, st stat) bool) []ID {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []ID
	for _, de := range ents {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.state == 'Z' || st.state == 'X' {
			continue
		}
		if keep(pid, st) {
			out = append(out, ID{PID: pid, Start: st.start})
		}
	}
	return out
}

// KillAll sends SIGKILL to each of ids that is still itself; it returns
// how many it reached.
func KillAll(ids []ID) int {
	n := 0
	for _, id := range ids {
		if id.Signal(syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// Booted is when the machine last started (btime in /proc/stat); zero when
// it cannot be read.
func Booted() time.Time {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(s, 0)
			}
		}
	}
	return time.Time{}
}
