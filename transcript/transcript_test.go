package transcript_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cotal-go/cotal/transcript"
)

// The samples are what the real harnesses wrote, one Bash (or shell) call
// then an answer, against the scripted model server (which reports 100
// tokens in and 10 out per reply): Claude Code 2.1.328's transcript with
// its request bodies and attachments left out, Codex 0.169.0's rollout
// file without its session head and instructions.
func TestRealTranscripts(t *testing.T) {
	for _, tc := range []struct {
		format, file string
		want         transcript.Usage
		answered     string
	}{
		{transcript.Claude, "claude-2.1.328.jsonl", transcript.Usage{In: 200, Out: 20, CostUSD: 0.0012000000000000001, CostKnown: true, ToolCalls: 1, Turns: 1}, "2026-12-02T05:01:36.473Z"},
		{transcript.Codex, "codex-0.169.0.jsonl", transcript.Usage{In: 200, Out: 20, ToolCalls: 1, Turns: 1}, "2026-12-02T05:01:37.386Z"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			r, err := transcript.NewReader(tc.format, filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Update()
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Answered, _ = time.Parse(time.RFC3339, tc.answered)
			if got != want {
				t.Fatalf("usage\n%+v\nwant\n%+v", got, want)
			}
			if got.Tokens() != 220 {
				t.Fatalf("tokens %d, want 220", got.Tokens())
			}
		})
	}
}

// TestGrowingTranscript: a file read as it is written, a line cut in two
// by a read, counts each message once; a rewritten (shorter) file is read
// again from its start.
func TestGrowingTranscript(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "claude-2.1.328.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	r, _ := transcript.NewReader(transcript.Claude, path)
	if _, err := r.Update(); err == nil {
		t.Fatal("a missing transcript read without error")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < len(b); i += 97 {
		if _, err := f.Write(b[i:min(i+97, len(b))]); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Update(); err != nil {
			t.Fatal(err)
		}
	}
	if u := r.Usage(); u.In != 200 || u.Out != 20 || u.ToolCalls != 1 || u.Turns != 1 {
		t.Fatalf("read in pieces: %+v", u)
	}
	if err := os.WriteFile(path, b[:len(b)/3], 0o600); err != nil {
		t.Fatal(err)
	}
	if u, _ := r.Update(); u.Out > 10 {
		t.Fatalf("a rewritten file was added to the old count: %+v", u)
	}
}

func TestRefusesWhatIsNoTranscript(t *testing.T) {
	if _, err := transcript.NewReader("vim", "x"); err == nil {
		t.Fatal("an unknown format was taken")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "real.jsonl")
	if err := os.WriteFile(target, []byte(`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":5}}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	r, _ := transcript.NewReader(transcript.Claude, link)
	if u, err := r.Update(); err == nil || u.In != 0 {
		t.Fatalf("a symlink was followed: %+v %v", u, err)
	}
	r, _ = transcript.NewReader(transcript.Claude, dir)
	if _, err := r.Update(); err == nil {
		t.Fatal("a directory was read as a transcript")
	}
	r, _ = transcript.NewReader(transcript.Claude, target)
	r.Feed([]byte("not json\n{\"type\":\"assistant\"\n"))
	if u, _ := r.Update(); u.In != 5 {
		t.Fatalf("garbage lines broke the count: %+v", u)
	}
}
