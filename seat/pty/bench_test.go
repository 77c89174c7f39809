package pty

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	cpty "github.com/creack/pty"
)

// reportLatency reports the p50 and p99 of lat in microseconds.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		i := int(float64(len(lat)-1) * p)
		return float64(lat[i].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// The command is typed as mark”er-N-end so the echo of the typed line never
// matches; only the command's output reads marker-N-end.
func markerCommand(i int) (cmd, want string) {
	return fmt.Sprintf("echo mark''er-%d-end", i), fmt.Sprintf("marker-%d-end", i)
}

// BenchmarkInputToScreen measures a Paste until the command's output is on
// the emulator's screen, next to creack/pty alone: the same bytes written to
// the master and the raw output scanned for the marker.
func BenchmarkInputToScreen(b *testing.B) {
	b.Run("seat", func(b *testing.B) {
		s := startSeat(b, "sh")
		<-s.FirstOutput()
		ch, cancel := s.Subscribe()
		defer cancel()
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			cmd, want := markerCommand(i)
			t0 := time.Now()
			if _, err := s.Paste(cmd, true); err != nil {
				b.Fatal(err)
			}
			// After each chunk, wait for the emulator to draw it.
			for !strings.Contains(s.Screen(), want) {
				select {
				case <-ch:
					s.settle()
				case <-time.After(5 * time.Second):
					b.Fatalf("no %s on screen", want)
				}
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		reportLatency(b, lat)
	})
	b.Run("creack-pty", func(b *testing.B) {
		cmd := exec.Command("sh")
		cmd.Env = withTerm(os.Environ())
		ptmx, err := cpty.StartWithSize(cmd, &cpty.Winsize{Cols: DefaultCols, Rows: DefaultRows})
		if err != nil {
			b.Fatal(err)
		}
		out := make(chan []byte, 1024)
		go func() {
			defer close(out)
			buf := make([]byte, readBufSize)
			for {
				n, err := ptmx.Read(buf)
				if n > 0 {
					out <- append([]byte(nil), buf[:n]...)
				}
				if err != nil {
					return
				}
			}
		}()
		defer func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			for range out {
			}
			_ = ptmx.Close()
		}()
		<-out // the prompt
		lat := make([]time.Duration, 0, b.N)
		var acc bytes.Buffer
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			line, want := markerCommand(i)
			acc.Reset()
			t0 := time.Now()
			if _, err := ptmx.Write([]byte(line)); err != nil {
				b.Fatal(err)
			}
			if _, err := ptmx.Write([]byte{'\r'}); err != nil {
				b.Fatal(err)
			}
			for !bytes.Contains(acc.Bytes(), []byte(want)) {
				select {
				case p := <-out:
					acc.Write(p)
				case <-time.After(5 * time.Second):
					b.Fatalf("no %s in output", want)
				}
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		reportLatency(b, lat)
	})
}

// BenchmarkStartToFirstOutput measures Start until FirstOutput, next to
// creack/pty alone until the first byte is read.
func BenchmarkStartToFirstOutput(b *testing.B) {
	b.Run("seat", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			s, err := Start(context.Background(), Config{Path: "sh", Args: []string{"-c", "echo ready; sleep 5"}})
			if err != nil {
				b.Fatal(err)
			}
			select {
			case <-s.FirstOutput():
			case <-time.After(5 * time.Second):
				b.Fatal("no first output")
			}
			lat = append(lat, time.Since(t0))
			b.StopTimer()
			s.Close()
			SpareReady() // its build in neither measure
			b.StartTimer()
		}
		b.StopTimer()
		reportLatency(b, lat)
	})
	b.Run("creack-pty", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		buf := make([]byte, 64)
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			cmd := exec.Command("sh", "-c", "echo ready; sleep 5")
			cmd.Env = withTerm(os.Environ())
			ptmx, err := cpty.StartWithSize(cmd, &cpty.Winsize{Cols: DefaultCols, Rows: DefaultRows})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ptmx.Read(buf); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			b.StopTimer()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			_ = ptmx.Close()
			b.StartTimer()
		}
		b.StopTimer()
		reportLatency(b, lat)
	})
}
