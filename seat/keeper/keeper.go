// Package keeper keeps a seat's process and its pty in a process of its
// own, so the seat outlives the mesh process that spawned it: a crash, a
// kill -9 or an upgrade of the mesh leaves it running, and the next
// manager takes it back through the keeper's socket. One keeper per seat
// (the cotal binary run as `__seat-keep <dir>`), in a session of its own,
// holding the pty master and the seat as its child; it mirrors the output
// into its own emulator, so a manager that connects later is painted the
// screen as it is, and keeps the newest output written while no manager
// is connected (bounded, the rest counted).
//
// The manager's side is a pty.Conduit (Dial), so a reattached seat is a
// pty.Seat like any other. The package imports seat/pty, seat/sandbox and
// internal/procid; never the mesh or the manager.
package keeper

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cotal-go/cotal/internal/procid"
	"github.com/cotal-go/cotal/seat/pty"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// Arg is the hidden first argument that makes the cotal binary (or a test
// binary calling sandbox.Main) a keeper.
const Arg = "__seat-keep"

func init() { sandbox.Handle(Arg, run) }

// readyFD is where the manager hands a starting keeper the pipe it says
// "ok" or why not on.
const readyFD = 3

// FinishWait bounds how long a keeper outlives its seat: it waits this
// long for a first manager to hear how the seat ended when none ever
// connected, and as long for the connected one to hang up.
const FinishWait = 10 * time.Second

// Bounds of a keeper's life.
const (
	// heartbeat is how often a keeper with no manager refreshes its
	// record's modification time: when it was last known alive.
	heartbeat = 10 * time.Second
	// helloWait bounds a connection's handshake.
	helloWait = 5 * time.Second
	// stallWrite bounds one write to a manager: one that takes no output
	// for this long is treated as gone.
	stallWrite = 30 * time.Second
	// reportWait bounds how long the sandbox launcher may take to say
	// what it achieved.
	reportWait = 5 * time.Second
	// tailLines are the last lines of the screen exit.json keeps.
	tailLines = 10
)

// keeper is one running keeper. mu guards the connected client, the ring
// and the exit.
type keeper struct {
	dir  string
	seat *pty.Seat
	rec  Record
	logf func(format string, args ...any)

	mu       sync.Mutex
	cur      *session // the connected manager; nil when none
	ever     bool     // a manager connected once
	ring     *ring    // output kept while no manager is connected
	stopRing func()
	recorded chan struct{} // closed once exit.json is written
	joined   chan struct{} // closed when the first manager connects
}

func run(args []string) int {
	if len(args) != 1 || !filepath.IsAbs(args[0]) {
		fmt.Fprintln(os.Stderr, "cotal: "+Arg+" is internal to the seat manager")
		return 2
	}
	dir := args[0]
	// The ready pipe is the manager's alone: the seat must not inherit it.
	syscall.CloseOnExec(readyFD)
	lf, err := os.OpenFile(filepath.Join(dir, logFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fail(err)
		return 1
	}
	defer lf.Close()
	logf := func(format string, a ...any) {
		fmt.Fprintf(lf, "%s %s\n", time.Now().Format(time.RFC3339Nano), fmt.Sprintf(format, a...))
	}
	// The terminal the manager ran in is not the keeper's: it takes the
	// hang-up and interrupt a closing terminal would send, and does
	// nothing with them. Caught, not ignored: an ignored signal stays
	// ignored across exec, and the seat must start with the defaults (an
	// interactive sh is stopped by a hang-up). A SIGTERM (the machine
	// going down) stops the seat, which ends the keeper.
	deaf := make(chan os.Signal, 4)
	signal.Notify(deaf, syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	go func() {
		for range deaf {
		}
	}()
	var plan Plan
	err = readJSON(filepath.Join(dir, planFile), &plan)
	_ = os.Remove(filepath.Join(dir, planFile))
	if err != nil {
		fail(fmt.Errorf("reading the plan: %w", err))
		return 1
	}
	l, d, err := listen(dir)
	if err != nil {
		fail(err)
		return 1
	}
	defer d.Close()
	s, rep, err := start(plan)
	if err != nil {
		l.Close()
		fail(err)
		return 1
	}
	seatID, err := procid.Of(s.PID())
	if err != nil {
		seatID = procid.ID{PID: s.PID()}
	}
	k := &keeper{dir: dir, seat: s, logf: logf, recorded: make(chan struct{}), joined: make(chan struct{}),
		rec: Record{V: Version, Keeper: procid.Self(), Seat: seatID, Started: s.Started().UTC(), Sandbox: rep.String(), Nested: rep.Nested}}
	size := plan.Ring
	if size <= 0 {
		size = DefaultRing
	}
	k.detach(size)
	if err := writeJSONFile(filepath.Join(dir, recordFile), k.rec); err != nil {
		s.Close()
		l.Close()
		fail(fmt.Errorf("writing %s: %w", recordFile, err))
		return 1
	}
	ready("ok")
	logf("keeping %s (%s), %s", seatID, plan.Path, k.rec.Sandbox)

	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		logf("SIGTERM: stopping the seat")
		_ = s.Stop(context.Background(), true)
	}()
	go k.beat()
	go k.accept(l, size)

	<-s.Done()
	k.finish(l)
	return 0
}

// start runs the plan's program in a pty, through the sandbox launcher
// when there is one.
func start(plan Plan) (*pty.Seat, sandbox.Report, error) {
	rep := sandbox.Report{Mode: sandbox.None, Reason: "the manager has no launcher"}
	cfg := pty.Config{Path: plan.Path, Args: plan.Args, Dir: plan.Dir, Env: plan.Env, Cols: plan.Cols, Rows: plan.Rows}
	if plan.Launcher == "" {
		s, err := pty.Start(context.Background(), cfg)
		return s, rep, err
	}
	var s *pty.Seat
	rep, err := sandbox.Start(sandbox.Plan{Launcher: plan.Launcher, Path: plan.Path, Argv0: plan.Argv0, Args: plan.Args, NoNamespace: plan.NoNamespace},
		reportWait, func(launcher string, largs []string, attr *syscall.SysProcAttr, report *os.File) error {
			c := cfg
			c.Path, c.Args, c.SysProcAttr, c.ExtraFiles = launcher, largs, attr, []*os.File{report}
			var err error
			s, err = pty.Start(context.Background(), c)
			return err
		})
	return s, rep, err
}

// ready tells the manager how the start went, on the pipe it handed over,
// and closes it.
func ready(msg string) {
	f := os.NewFile(readyFD, "ready")
	if f == nil {
		return
	}
	_, _ = f.WriteString(msg + "\n")
	_ = f.Close()
}

func fail(err error) {
	ready("error: " + err.Error())
	fmt.Fprintln(os.Stderr, "cotal keeper:", err)
}

// finish records how the seat ended, hands that to the connected manager
// (waiting a while for a first one if none ever came), and lets go.
func (k *keeper) finish(l net.Listener) {
	code, sig, _ := k.seat.ExitStatus()
	x := ExitRecord{Code: code, Signal: sig, At: time.Now().UTC(), Tail: k.seat.Tail(tailLines)}
	if err := writeJSONFile(filepath.Join(k.dir, exitFile), x); err != nil {
		k.logf("writing %s: %v", exitFile, err)
	}
	close(k.recorded)
	k.logf("the seat ended (code %d %s)", code, sig)
	select {
	case <-k.joined:
	case <-time.After(FinishWait):
	}
	k.mu.Lock()
	cur := k.cur
	k.mu.Unlock()
	if cur != nil {
		select {
		case <-cur.gone:
		case <-time.After(FinishWait):
		}
	}
	l.Close()
}

// beat refreshes the record's modification time while no manager is
// connected: the next one reads it as when the keeper was last alive.
func (k *keeper) beat() {
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	path := filepath.Join(k.dir, recordFile)
	for {
		select {
		case <-k.seat.Done():
			return
		case now := <-t.C:
			k.mu.Lock()
			alone := k.cur == nil
			k.mu.Unlock()
			if alone {
				_ = os.Chtimes(path, now, now)
			}
		}
	}
}

// detach keeps the output from now on in a ring until a manager connects;
// it needs mu or no other goroutine yet.
func (k *keeper) detach(size int) {
	r := newRing(size)
	ch, cancel := k.seat.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range ch {
			r.write(p)
		}
	}()
	k.ring = r
	k.stopRing = func() {
		cancel()
		<-done
	}
}

func (k *keeper) accept(l net.Listener, size int) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go k.serve(c.(*net.UnixConn), size)
	}
}

// session is one manager's connection. wmu serializes its frames.
type session struct {
	c        *net.UnixConn
	instance string
	wmu      sync.Mutex
	gone     chan struct{} // closed when the connection is over
	once     sync.Once
}

func (s *session) send(typ byte, payload []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.c.SetWriteDeadline(time.Now().Add(stallWrite))
	return writeFrame(s.c, typ, payload)
}

// sendRaw writes frames already framed, in one write.
func (s *session) sendRaw(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.c.SetWriteDeadline(time.Now().Add(stallWrite))
	_, err := s.c.Write(b)
	return err
}

func (s *session) sendJSON(typ byte, v any) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.c.SetWriteDeadline(time.Now().Add(stallWrite))
	return writeJSON(s.c, typ, v)
}

// welcome sends the welcome with the pty's master side attached, so the
// manager types into the seat directly; where that cannot be done, the
// welcome goes without it and input comes in frames.
func (s *session) welcome(seat *pty.Seat, w Welcome) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.c.SetWriteDeadline(time.Now().Add(stallWrite))
	if seat.Running() {
		w.Master = true
		b := appendJSONFrame(nil, frameWelcome, w)
		sent := false
		err := seat.WithMaster(func(fd int) error {
			n, _, err := s.c.WriteMsgUnix(b, unix.UnixRights(fd), nil)
			sent = n > 0
			if err == nil && n < len(b) {
				_, err = s.c.Write(b[n:])
			}
			return err
		})
		if sent || err == nil {
			return err
		}
		w.Master = false
	}
	return writeJSON(s.c, frameWelcome, w)
}

func (s *session) end() {
	s.once.Do(func() {
		_ = s.c.Close()
		close(s.gone)
	})
}

// serve runs one manager's connection: the handshake, the paint, the
// output relay and its requests, until either side ends it.
func (k *keeper) serve(c *net.UnixConn, size int) {
	if err := samePeer(c); err != nil {
		k.logf("refused a connection: %v", err)
		_ = writeJSON(c, frameRefuse, refusal{V: Version, Message: err.Error()})
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(helloWait))
	br := bufio.NewReader(c)
	typ, b, err := readFrame(br, nil)
	var h hello
	if err == nil && typ != frameHello {
		err = fmt.Errorf("the first frame is %q, not a hello", typ)
	}
	if err == nil {
		err = decode(b, &h)
	}
	if err == nil && h.V != Version {
		err = fmt.Errorf("this keeper speaks protocol %d, the manager %d", Version, h.V)
	}
	if err != nil {
		k.logf("refused a connection: %v", err)
		_ = writeJSON(c, frameRefuse, refusal{V: Version, Message: err.Error()})
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	s := &session{c: c, instance: h.Instance, gone: make(chan struct{})}

	k.mu.Lock()
	old := k.cur
	k.cur = s
	var kept []byte
	var det *Detached
	first := !k.ever
	k.ever = true
	if k.ring != nil {
		k.stopRing()
		kept, det = k.ring.take()
		k.ring, k.stopRing = nil, nil
	}
	if first {
		// What the seat wrote before its first manager came is on the
		// screen painted below; nothing was written while no mesh ran.
		kept, det = nil, nil
		close(k.joined)
	}
	k.mu.Unlock()
	if old != nil {
		k.logf("manager %s takes the seat from manager %s", h.Instance, old.instance)
		old.end()
	}
	k.logf("manager %s connected", h.Instance)

	screen, ch, cancel := k.seat.SubscribeScreen()
	cols, rows := k.seat.Size()
	w := Welcome{V: Version, Keeper: k.rec.Keeper, Seat: k.rec.Seat, StartedMs: k.seat.Started().UnixMilli(),
		Cols: cols, Rows: rows, Sandbox: k.rec.Sandbox, Nested: k.rec.Nested, Exited: !k.seat.Running(), Detached: det}
	if t := k.seat.LastOutput(); !t.IsZero() {
		w.LastOutMs = t.UnixMilli()
	}
	if old != nil {
		w.Superseded = old.instance
	}
	err = s.welcome(k.seat, w)
	for len(kept) > 0 && err == nil {
		n := min(len(kept), 64<<10)
		err = s.send(framePaint, kept[:n])
		kept = kept[n:]
	}
	if err == nil {
		err = s.paint(screen)
	}
	go k.requests(s, br)
	if err == nil {
		err = k.relay(s, ch, cancel)
	} else {
		cancel()
	}
	if err != nil {
		k.logf("manager %s: %v", h.Instance, err)
	}
	s.end()

	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cur == s {
		k.cur = nil
		if k.seat.Running() {
			k.detach(size)
		}
		// Alive now, with no manager: the heartbeat goes on from here.
		now := time.Now()
		_ = os.Chtimes(filepath.Join(k.dir, recordFile), now, now)
		k.logf("manager %s disconnected", h.Instance)
	}
}

// paint sends the screen as the keeper's emulator shows it, after a full
// reset (CAN ends any sequence the manager's parser is inside, RIS clears
// its screens and modes), in frames the manager reads whole.
func (s *session) paint(screen string) error {
	b := []byte("\x18\x1bc" + screen)
	for len(b) > 0 {
		n := min(len(b), 64<<10)
		if err := s.send(framePaint, b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// relay sends the output to the manager until the seat ends (then the
// exit frame) or the connection does. A subscription dropped for lagging
// is taken again with a fresh paint.
func (k *keeper) relay(s *session, ch <-chan []byte, cancel func()) error {
	for {
		select {
		case p, ok := <-ch:
			if ok {
				if err := s.send(frameOutput, p); err != nil {
					cancel()
					return err
				}
				continue
			}
			cancel()
			select {
			case <-k.seat.OutputDone():
				select {
				case <-k.seat.Done():
				case <-s.gone:
					return nil
				}
				<-k.recorded
				code, sig, _ := k.seat.ExitStatus()
				return s.sendJSON(frameExit, exitFrame{Code: code, Signal: sig})
			default:
			}
			var screen string
			screen, ch, cancel = k.seat.SubscribeScreen()
			if err := s.paint(screen); err != nil {
				cancel()
				return err
			}
		case <-s.gone:
			cancel()
			return nil
		}
	}
}

// requests reads the manager's frames until the connection ends. Input
// is typed by a writer of its own, in order, so a program that does not
// read its input never holds up a signal.
func (k *keeper) requests(s *session, br *bufio.Reader) {
	defer s.end()
	inputs := make(chan []byte, 64)
	defer close(inputs)
	go func() {
		// The inputs that came together (a paste and its Enter) are typed
		// in order and answered in one write.
		var replies []byte
		for b := range inputs {
			replies = replies[:0]
			for {
				id := binary.BigEndian.Uint32(b[:4])
				n, err := k.seat.Write(b[4:])
				replies = appendJSONFrame(replies, frameReply, reply(id, n, err))
				var more bool
				select {
				case b, more = <-inputs:
				default:
				}
				if !more {
					break
				}
			}
			_ = s.sendRaw(replies)
		}
	}()
	for {
		typ, b, err := readFrame(br, nil)
		if err != nil {
			return
		}
		switch typ {
		case frameInput:
			if len(b) < 4 {
				return
			}
			select {
			case inputs <- b:
			case <-s.gone:
				return
			}
		case frameSignal:
			var f signalFrame
			if decode(b, &f) != nil {
				return
			}
			err := k.seat.Signal(syscall.Signal(f.Sig))
			_ = s.sendJSON(frameReply, reply(f.ID, 0, err))
		case frameResize:
			var f resizeFrame
			if decode(b, &f) != nil {
				return
			}
			if err := k.seat.Resize(f.Cols, f.Rows); err != nil && !errors.Is(err, pty.ErrNotRunning) {
				k.logf("resize to %dx%d: %v", f.Cols, f.Rows, err)
			}
		case frameAnswers:
			var f answersFrame
			if decode(b, &f) != nil {
				return
			}
			k.seat.SetAnswerQueries(f.On)
		default:
			k.logf("manager %s sent an unknown frame %q", s.instance, typ)
			return
		}
	}
}

func reply(id uint32, n int, err error) replyFrame {
	r := replyFrame{ID: id, N: n}
	if errors.Is(err, pty.ErrNotRunning) {
		r.NotRunning = true
	} else if err != nil {
		r.Err = err.Error()
	}
	return r
}

// samePeer refuses a connection from another user: the socket's
// directory is the user's own (0700), this is the second lock.
func samePeer(c *net.UnixConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("a process of uid %d may not take this seat", cred.Uid)
	}
	return nil
}
