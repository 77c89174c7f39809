package tui

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// LogSink takes the warnings of the endpoint and the mesh (which must not
// write to the screen the dashboard owns): it keeps the ones not yet shown
// and copies each to a log file.
type LogSink struct {
	mu      sync.Mutex
	w       io.Writer
	pending []string
}

// NewLogSink returns a sink that also writes every line to w (nil: none).
func NewLogSink(w io.Writer) *LogSink { return &LogSink{w: w} }

// Logf records one warning; it is a mesh.Options.Logf.
func (s *LogSink) Logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w != nil {
		fmt.Fprintf(s.w, "%s dashboard: %s\n", time.Now().Format(time.RFC3339), line)
	}
	if len(s.pending) < 32 {
		s.pending = append(s.pending, line)
	}
}

// drain returns and forgets the warnings not yet shown.
func (s *LogSink) drain() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out
}
