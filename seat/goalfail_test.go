package seat_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/client"
)

// logBuffer collects a mesh's log lines from any goroutine.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUnrecordedSpawnFailureIsLogged: a seat that exits after its goal
// already ended uncertain cannot have its failure written on the goal;
// that is said in the log, naming the seat and how it ended, instead of
// being dropped.
func TestUnrecordedSpawnFailureIsLogged(t *testing.T) {
	var log logBuffer
	h := startMeshWith(t, host.Config{
		Paths: config.Paths{Space: space, StoreDir: t.TempDir()}, Readiness: 500 * time.Millisecond, Log: &log,
	})
	h.persona("quiet", "sh", []string{"-c", "sleep 1; exit 3"}, nil)
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "quiet"})
	if res := goal(t, h.c, h.iid, acc.GoalID, 5*time.Second); res.State != ep.GoalUncertain {
		t.Fatalf("goal %s %+v, want uncertain", res.State, res.Error)
	}
	waitFor(t, 10*time.Second, func() error {
		for _, l := range strings.Split(log.String(), "\n") {
			if strings.Contains(l, "seat quiet") && strings.Contains(l, "exit status 3") {
				return nil
			}
		}
		return fmt.Errorf("no log line says seat quiet exited (exit status 3) with its goal already ended; log:\n%s", log.String())
	})
}
