package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// A harness plugin that lives in a long process of its own (opencode's)
// keeps one `cotal hook --stream` running instead of starting a hook per
// event: the process, its creds and its connection are there before the
// event is. Each event is one line of JSON on its stdin, and each gets
// exactly one line back, in the order the events finish, matched by id.
// An event in the stream is what the same event in a hook of its own is:
// the same call, the same waits, its output acked only once it was
// written.

// HookLine is one event the harness hands the stream.
type HookLine struct {
	ID    int64           `json:"id"`
	Event string          `json:"event"`
	Input json.RawMessage `json:"input"`
}

// HookAnswer is the stream's one line for an event: what its hook prints
// (empty when nothing), and why it failed when it did (for the harness's
// log; an empty output is what the harness acts on).
type HookAnswer struct {
	ID     int64  `json:"id"`
	Output string `json:"output"`
	Error  string `json:"error,omitempty"`
}

// RunHookStream runs the events read from in, each as RunHook runs one,
// and writes their answers to out. They reach the connector in the order
// they came, each handed over and (its output written) ended before the
// next is handed over, as a plugin awaiting each hook in turn has it; one
// the connector says waits (a permission prompt its person answers) waits
// apart, holding up nothing after it. It ends when in ends or ctx does, or its
// harness exits: the events still running are stopped with that cause, as
// a harness stopping its hook stops it. A line that cannot be read is
// answered empty, with why, when it carries an id; errs gets what went
// wrong with each event.
func (s Self) RunHookStream(ctx context.Context, in io.Reader, out io.Writer, errs io.Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchParent(ctx, cancel)
	var mu sync.Mutex
	answer := func(a HookAnswer) error {
		b, _ := json.Marshal(a)
		mu.Lock()
		defer mu.Unlock()
		if _, err := out.Write(append(b, '\n')); err != nil {
			return err
		}
		if f, ok := out.(*os.File); ok {
			_ = f.Sync()
		}
		return nil
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), MaxHookInput+4096)
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		for sc.Scan() {
			select {
			case lines <- append([]byte(nil), sc.Bytes()...):
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()
	for {
		var line []byte
		var ok bool
		select {
		case line, ok = <-lines:
		case <-ctx.Done():
			return nil
		}
		if !ok {
			err := <-readErr
			cancel(errHarnessGone)
			if err != nil {
				return fmt.Errorf("reading its events: %v", err)
			}
			return nil
		}
		var l HookLine
		if err := json.Unmarshal(line, &l); err != nil || l.Event == "" || !json.Valid(l.Input) {
			why := "the line is not an event: {\"id\", \"event\", \"input\"} in JSON"
			fmt.Fprintf(errs, "cotal hook --stream: %s\n", why)
			if l.ID != 0 {
				_ = answer(HookAnswer{ID: l.ID, Error: why})
			}
			continue
		}
		var written bool
		s.runHook(ctx, l.Event, l.Input, func(output string) error {
			written = true
			return answer(HookAnswer{ID: l.ID, Output: output})
		}, func(rest func()) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rest()
			}()
		}, func(err error) {
			if err != nil {
				fmt.Fprintf(errs, "cotal hook %s: %v\n", l.Event, err)
			}
			if !written {
				a := HookAnswer{ID: l.ID}
				if err != nil {
					a.Error = err.Error()
				}
				_ = answer(a)
			}
		})
	}
}
