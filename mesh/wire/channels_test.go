package wire_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

// channelOfLength builds a valid dotted channel of exactly n characters.
func channelOfLength(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		seg := min(9, n-b.Len())
		b.WriteString(strings.Repeat("c", seg))
	}
	s := b.String()
	if strings.HasSuffix(s, ".") {
		s = s[:len(s)-1] + "c"
	}
	return s
}

func TestValidateChannel(t *testing.T) {
	long := channelOfLength(wire.MaxChannelLength)
	tests := []struct {
		name      string
		ch        string
		withError func(*testing.T, error)
	}{
		{name: "single", ch: "general"},
		{name: "dotted", ch: "team.backend.api"},
		{name: "dash and underscore", ch: "team-1.back_end"},
		{name: "star", ch: "team.*"},
		{name: "star middle", ch: "team.*.api"},
		{name: "gt last", ch: "team.>"},
		{name: "bare gt", ch: ">"},
		{name: "max length", ch: long},
		{name: "one over max", ch: long + "c", withError: wantChannelErr(`4097 characters, the limit is 4096`)},
		{name: "empty", ch: "", withError: wantChannelErr(`invalid channel "": empty name`)},
		{name: "slash refused", ch: "foo/bar", withError: wantChannelErr(`invalid channel "foo/bar": segment "foo/bar" is not allowed`)},
		{name: "space refused", ch: "foo bar", withError: wantChannelErr(`segment "foo bar" is not allowed`)},
		{name: "leading dot", ch: ".team", withError: wantChannelErr(`invalid channel ".team": empty segment`)},
		{name: "trailing dot", ch: "team.", withError: wantChannelErr(`empty segment`)},
		{name: "double dot", ch: "team..a", withError: wantChannelErr(`empty segment`)},
		{name: "gt not last", ch: "team.>.a", withError: wantChannelErr(`invalid channel "team.>.a": > may only be the last segment`)},
		{name: "partial star", ch: "team.a*", withError: wantChannelErr(`segment "a*" is not allowed`)},
		{name: "partial gt", ch: "team.>a", withError: wantChannelErr(`segment ">a" is not allowed`)},
		{name: "unicode", ch: "équipe", withError: wantChannelErr(`is not allowed`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wire.ValidateChannel(tt.ch)
			if tt.withError == nil {
				if err != nil {
					t.Fatalf("ValidateChannel = %v, want nil", err)
				}
				return
			}
			tt.withError(t, err)
		})
	}
	if n := len(long); n != wire.MaxChannelLength {
		t.Fatalf("test channel has %d characters, want %d", n, wire.MaxChannelLength)
	}
}

func wantChannelErr(substr string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("got nil, want an error containing %q", substr)
		}
		if !errors.Is(err, wire.ErrInvalidChannel) {
			t.Errorf("error %v does not wrap ErrInvalidChannel", err)
		}
		if !strings.Contains(err.Error(), substr) {
			t.Errorf("error %q does not contain %q", err, substr)
		}
	}
}

func TestIsConcrete(t *testing.T) {
	tests := []struct {
		ch   string
		want bool
	}{
		{"team", true},
		{"team.backend", true},
		{"team.*", false},
		{"team.>", false},
		{"*.a", false},
		{"team.a*", true}, // not a wildcard segment; ValidateChannel refuses it separately
	}
	for _, tt := range tests {
		t.Run(tt.ch, func(t *testing.T) {
			if got := wire.IsConcrete(tt.ch); got != tt.want {
				t.Errorf("IsConcrete(%q) = %v, want %v", tt.ch, got, tt.want)
			}
		})
	}
}

func TestValidateConcreteChannel(t *testing.T) {
	tests := []struct {
		name    string
		ch      string
		wantErr string
		is      error
	}{
		{name: "concrete", ch: "team.backend"},
		{name: "family", ch: "team.>", wantErr: `cannot publish to wildcard channel "team.>" - pick a concrete sub-channel`, is: wire.ErrWildcardTarget},
		{name: "one level", ch: "team.*", wantErr: `cannot publish to wildcard channel "team.*" - pick a concrete sub-channel`, is: wire.ErrWildcardTarget},
		{name: "invalid first", ch: "foo/bar", wantErr: `invalid channel "foo/bar": segment "foo/bar" is not allowed; use dotted segments of A-Z a-z 0-9 _ - (a segment may also be exactly * or, last, >)`, is: wire.ErrInvalidChannel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wire.ValidateConcreteChannel(tt.ch)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("error does not wrap %v", tt.is)
			}
		})
	}
}

func TestChannelMatches(t *testing.T) {
	tests := []struct {
		pattern, ch string
		want        bool
	}{
		{"a", "a", true},
		{"a", "b", false},
		{"a", "a.b", false},
		{"a.b", "a", false},
		{"a.*", "a.b", true},
		{"a.*", "a", false},
		{"a.*", "a.b.c", false},
		{"*.b", "a.b", true},
		{"a.>", "a.b", true},
		{"a.>", "a.b.c", true},
		{"a.>", "a", false},
		{">", "a", true},
		{">", "a.b", true},
		{"a.*.c", "a.b.c", true},
		{"a.*.c", "a.b.d", false},
		{"review.>", "review", false},
		{"Team", "team", false},
		{"", "", false},
		{"a", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.ch, func(t *testing.T) {
			if got := wire.ChannelMatches(tt.pattern, tt.ch); got != tt.want {
				t.Errorf("ChannelMatches(%q, %q) = %v, want %v", tt.pattern, tt.ch, got, tt.want)
			}
		})
	}
}

func TestPatternCovers(t *testing.T) {
	tests := []struct {
		grant, pattern string
		want           bool
	}{
		{"team", "team", true},
		{"team", "team.a", false},
		{"team.>", "team.*", true},
		{"team.>", "team.a.>", true},
		{"team.>", "team.a", true},
		{"team.>", "team.>", true},
		{"team.>", "team", false},
		{"review.>", "review", false},
		{"team.*", "team.>", false},
		{"team.*", "team.*", true},
		{"team.*", "team.a", true},
		{"team.*", "team.a.b", false},
		{"team.a", "team.*", false},
		{">", "anything.>", true},
		{">", "*", true},
		{"*", ">", false},
		{"*.a", "x.a", true},
		{"*.a", "*.b", false},
		{"a.*.c", "a.*.c", true},
		{"a.*.c", "a.>", false},
		{"", "a", false},
		{"a", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.grant+"~"+tt.pattern, func(t *testing.T) {
			if got := wire.PatternCovers(tt.grant, tt.pattern); got != tt.want {
				t.Errorf("PatternCovers(%q, %q) = %v, want %v", tt.grant, tt.pattern, got, tt.want)
			}
		})
	}
}

// TestPatternCoversAgreesWithMatches checks PatternCovers against brute force over a small universe of channels.
func TestPatternCoversAgreesWithMatches(t *testing.T) {
	segs := []string{"a", "b", "*", ">"}
	var patterns []string
	var grow func(prefix string, depth int)
	grow = func(prefix string, depth int) {
		if depth == 0 {
			return
		}
		for _, s := range segs {
			p := s
			if prefix != "" {
				p = prefix + "." + s
			}
			if wire.ValidateChannel(p) == nil {
				patterns = append(patterns, p)
			}
			if s != ">" {
				grow(p, depth-1)
			}
		}
	}
	grow("", 3)
	var channels []string
	for _, p := range patterns {
		if wire.IsConcrete(p) {
			channels = append(channels, p)
		}
	}
	// Extend the universe one level deeper and with a fresh literal so > and * are tested against unseen names.
	for _, c := range append([]string(nil), channels...) {
		channels = append(channels, c+".z", "z."+c)
	}
	for _, g := range patterns {
		for _, p := range patterns {
			want := true
			hit := false
			for _, c := range channels {
				if wire.ChannelMatches(p, c) {
					hit = true
					if !wire.ChannelMatches(g, c) {
						want = false
						break
					}
				}
			}
			if !hit {
				continue
			}
			if got := wire.PatternCovers(g, p); got != want {
				t.Errorf("PatternCovers(%q, %q) = %v, brute force says %v", g, p, got, want)
			}
		}
	}
}

func TestCovered(t *testing.T) {
	acl := []string{"review", "team.>"}
	tests := []struct {
		pattern string
		want    bool
	}{
		{"review", true},
		{"review.a", false},
		{"team.a", true},
		{"team.*", true},
		{"team", false},
		{"other", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			if got := wire.Covered(acl, tt.pattern); got != tt.want {
				t.Errorf("Covered(%v, %q) = %v, want %v", acl, tt.pattern, got, tt.want)
			}
		})
	}
	if wire.Covered(nil, "a") {
		t.Error("Covered(nil, a) = true, want false")
	}
}
