package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// gitEnv is the environment git runs with: the process's, without the
// variables that would point git at another repository or index, and with
// no prompt for credentials or an editor.
func gitEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR":
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true"}, extra...)...)
}

// gitError is a git command that failed: its arguments, exit code and what
// it said on stderr.
type gitError struct {
	args   []string
	code   int
	stderr string
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.code)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), msg)
}

// Every seat of a project writes into one repository (its worktree's
// commits go to the shared .git), so it can write that repository's
// config and hooks: a program it names there would run as the person when
// cotal runs git for them (a diff, a merge). cotal's own git commands run
// none of it: no hooks, no fsmonitor, no commit signing program, every
// filter the config names passing content through, and every merge driver
// it names failing, so that merge is refused as a conflict. Diffs already
// run no external diff or textconv (--no-ext-diff --no-textconv).
var safeConfig = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false"}

// overrides are the -c pairs that neuter the filters and merge drivers
// the repository's config (with its includes) names.
func overrides(ctx context.Context, dir string, env []string) []string {
	cmd := exec.CommandContext(ctx, "git", append(slices.Clone(safeConfig), "config", "--null", "--name-only", "--get-regexp", `^(filter|merge)\.`)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		return nil // none named (exit 1), or not a repository yet
	}
	var args []string
	seen := map[string]bool{}
	for _, key := range strings.Split(string(out), "\x00") {
		section, rest, ok := strings.Cut(key, ".")
		dot := strings.LastIndex(rest, ".")
		if !ok || dot < 0 {
			continue
		}
		name := rest[:dot]
		if seen[section+"."+name] {
			continue
		}
		seen[section+"."+name] = true
		switch section {
		case "filter":
			args = append(args, "-c", "filter."+name+".clean=cat", "-c", "filter."+name+".smudge=cat",
				"-c", "filter."+name+".process=", "-c", "filter."+name+".required=false")
		case "merge":
			args = append(args, "-c", "merge."+name+".driver=false")
		}
	}
	return args
}

// run runs git in dir and returns its stdout.
func run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	if env == nil {
		env = gitEnv()
	}
	full := append(append(slices.Clone(safeConfig), overrides(ctx, dir, env)...), args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), &gitError{args: args, code: ee.ExitCode(), stderr: errb.String()}
		}
		return out.String(), fmt.Errorf("running git: %w", err)
	}
	return out.String(), nil
}

// git runs git in dir with the cleaned environment.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return run(ctx, dir, nil, args...)
}

// exitCode is the exit code of a failed git command, or -1.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// lines splits git's output into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			out = append(out, l)
		}
	}
	return out
}
