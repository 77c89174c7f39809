package main

import (
	"context"
	"regexp"
	"testing"

	"github.com/cotal-go/cotal/host"
)

// TestConformanceSeedDescribeShowsInputTargetedOnLifecycle: `cotal
// describe manager` shows input as the control-surface page has it: on
// the lifecycle capability, targeted in owner and any mode, the row shape
// of attach and despawn. It showed "input operator untargeted".
func TestConformanceSeedDescribeShowsInputTargetedOnLifecycle(t *testing.T) {
	c := newCLI(t, "described")
	h, err := host.Start(context.Background(), host.Config{Paths: c.paths, ProjectDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	out, errOut, code := c.run("describe", "manager")
	if code != 0 {
		t.Fatalf("describe manager: exit %d\n%s%s", code, out, errOut)
	}
	for _, row := range []string{
		`(?m)^  input +lifecycle +targeted \(owner, any\)$`,
		`(?m)^  keys +lifecycle +targeted \(owner, any\)$`,
		`(?m)^  attach +lifecycle +targeted \(owner, any\)$`,
		`(?m)^  despawn +write +targeted \(owner, any\)$`,
	} {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("describe manager has no row %s:\n%s", row, out)
		}
	}
}
