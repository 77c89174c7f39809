package main

import (
	"os"
	"strconv"
	"testing"
)

func TestLeaseHolderAlive(t *testing.T) {
	host, _ := os.Hostname()
	me := os.Getpid()
	for _, c := range []struct {
		name    string
		holder  string
		meshPID int
		want    bool
	}{
		{"this process, the store's mesh", host + "/" + strconv.Itoa(me), me, true},
		{"this process, mesh unknown", host + "/" + strconv.Itoa(me), 0, true},
		{"a live process that is not the store's mesh", host + "/" + strconv.Itoa(me), me + 1, false},
		{"a pid that is gone", host + "/999999999", 0, false},
		{"another host cannot be checked", "elsewhere.example/1", me, true},
		{"not host/pid", "custom-instance", me, true},
	} {
		if got := leaseHolderAlive(c.holder, c.meshPID); got != c.want {
			t.Errorf("%s: leaseHolderAlive(%q, %d) = %v, want %v", c.name, c.holder, c.meshPID, got, c.want)
		}
	}
}
