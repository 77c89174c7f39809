package keeper

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cotal-go/cotal/internal/procid"
	"github.com/cotal-go/cotal/seat/pty"
)

// ErrLost is the Exit.Lost of a seat whose keeper went away before the
// seat's end was seen: the seat lost its pty with it.
var ErrLost = errors.New("keeper: the keeper holding the seat is gone")

// RefusedError is a keeper's refusal of a handshake (another protocol
// version, another user).
type RefusedError struct{ Message string }

func (e *RefusedError) Error() string { return "the keeper refused: " + e.Message }

// Started is a keeper that Start started: its process, which the caller
// reaps through Wait, and its record.
type Started struct {
	Record Record
	cmd    *exec.Cmd
}

// Wait reaps the keeper process once it ends.
func (s *Started) Wait() error { return s.cmd.Wait() }

// startWait bounds how long a keeper may take to say its seat runs.
const startWait = 15 * time.Second

// Start runs a keeper for plan in dir (made 0700 if needed; the caller
// puts nothing else of anyone's in it): exe (the cotal binary) as
// `__seat-keep dir`, in a session of its own with no terminal, so
// nothing the mesh process goes through (a terminal closing, a signal to
// its process group, its death) reaches it. It returns once the keeper
// says the seat's process runs, or why it could not start it.
func Start(ctx context.Context, exe, dir string, plan Plan) (*Started, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	if err := writeJSONFile(filepath.Join(dir, planFile), plan); err != nil {
		return nil, fmt.Errorf("writing the keeper's plan: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		w.Close()
		return nil, err
	}
	defer null.Close()
	cmd := exec.Command(exe, Arg, dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	err = cmd.Start()
	w.Close()
	if err != nil {
		_ = os.Remove(filepath.Join(dir, planFile))
		return nil, fmt.Errorf("starting the seat's keeper: %w", err)
	}
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
		said <- strings.TrimSpace(line)
	}()
	var msg string
	select {
	case msg = <-said:
	case <-time.After(startWait):
		msg = "error: the keeper did not say within " + startWait.String() + " whether the seat started"
	case <-ctx.Done():
		msg = "error: " + ctx.Err().Error()
	}
	if msg != "ok" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = os.Remove(filepath.Join(dir, planFile))
		if m, ok := strings.CutPrefix(msg, "error: "); ok {
			return nil, errors.New(m)
		}
		return nil, errors.New("the keeper exited without saying whether the seat started")
	}
	rec, _, err := ReadRecord(dir)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the keeper's record: %w", err)
	}
	return &Started{Record: rec, cmd: cmd}, nil
}

// dialWait bounds a connection and its handshake.
const dialWait = 5 * time.Second

// Dial connects to the keeper of dir as manager instance and takes its
// seat, superseding any other manager's connection. The welcome says what
// the seat is; the Conn is its pty.Conduit.
func Dial(dir, instance string) (*Conn, Welcome, error) {
	nc, err := dialDir(dir, dialWait)
	if err != nil {
		return nil, Welcome{}, err
	}
	_ = nc.SetDeadline(time.Now().Add(dialWait))
	if err := writeJSON(nc, frameHello, hello{V: Version, Instance: instance}); err != nil {
		nc.Close()
		return nil, Welcome{}, fmt.Errorf("greeting the keeper: %w", err)
	}
	first, master, err := readFirst(nc)
	if err != nil {
		nc.Close()
		return nil, Welcome{}, fmt.Errorf("the keeper's welcome: %w", err)
	}
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(first), nc), 64<<10)
	typ, b, err := readFrame(br, nil)
	if err == nil && (typ != frameWelcome || noMaster) && master != nil {
		_ = master.Close() // only a welcome carries the master, and a test may refuse it
		master = nil
	}
	if err != nil {
		closeFile(master)
		nc.Close()
		return nil, Welcome{}, fmt.Errorf("the keeper's welcome: %w", err)
	}
	switch typ {
	case frameRefuse:
		var r refusal
		_ = decode(b, &r)
		nc.Close()
		return nil, Welcome{}, &RefusedError{Message: r.Message}
	case frameWelcome:
	default:
		nc.Close()
		return nil, Welcome{}, fmt.Errorf("the keeper answered with frame %q", typ)
	}
	var w Welcome
	if err := decode(b, &w); err != nil {
		closeFile(master)
		nc.Close()
		return nil, Welcome{}, err
	}
	_ = nc.SetDeadline(time.Time{})
	c := &Conn{nc: nc, out: make(chan chunk, 64), exited: make(chan struct{}), replies: map[uint32]chan replyFrame{}}
	if master != nil && w.Master {
		c.master.Store(master)
	} else {
		closeFile(master)
	}
	go c.read(br)
	return c, w, nil
}

// noMaster has Dial refuse the pty master a keeper hands over, so a test
// can type through input frames as with a keeper that hands over none.
var noMaster bool

// readFirst reads what the keeper sent first, with the descriptor of the
// pty's master side if one came with it (a welcome's SCM_RIGHTS); any
// other descriptor sent is closed.
func readFirst(nc net.Conn) ([]byte, *os.File, error) {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return nil, nil, nil
	}
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	var master *os.File
	if msgs, perr := unix.ParseSocketControlMessage(oob[:oobn]); perr == nil {
		for _, m := range msgs {
			fds, _ := unix.ParseUnixRights(&m)
			for _, fd := range fds {
				if master == nil {
					// The master is non-blocking (the keeper's poller
					// reads it), so the File is pollable; its Fd is never
					// asked for, which would make it blocking for both.
					master = os.NewFile(uintptr(fd), "pty master")
					continue
				}
				_ = unix.Close(fd)
			}
		}
	}
	if n == 0 && err != nil {
		closeFile(master)
		return nil, nil, err
	}
	return buf[:n], master, nil
}

func closeFile(f *os.File) {
	if f != nil {
		_ = f.Close()
	}
}

// Conn is a manager's connection to a keeper: the seat's pty.Conduit.
// mu guards the pending replies and the end.
type Conn struct {
	nc  net.Conn
	wmu sync.Mutex
	out chan chunk // output and paints, in order; closed at the end
	// pending is what of the chunk Read last took it has not returned.
	pending chunk

	mu      sync.Mutex
	replies map[uint32]chan replyFrame
	exit    pty.Exit
	ended   bool
	exited  chan struct{} // closed at the end: the exit frame, or the connection lost
	nextID  atomic.Uint32
	closing atomic.Bool
	// master is the seat's pty master, when the keeper handed it over:
	// input is written to it directly. Closed and cleared at the end.
	master atomic.Pointer[os.File]
}

type chunk struct {
	b     []byte
	paint bool
}

// read takes the keeper's frames until the connection ends.
func (c *Conn) read(br *bufio.Reader) {
	defer close(c.out)
	for {
		typ, b, err := readFrame(br, nil)
		if err != nil {
			why := fmt.Errorf("%w: %v", ErrLost, err)
			if c.closing.Load() {
				why = pty.ErrDetached
			}
			c.end(pty.Exit{Code: -1, Lost: why})
			return
		}
		switch typ {
		case frameOutput, framePaint:
			c.out <- chunk{b: b, paint: typ == framePaint}
		case frameReply:
			var r replyFrame
			if decode(b, &r) == nil {
				c.mu.Lock()
				ch := c.replies[r.ID]
				delete(c.replies, r.ID)
				c.mu.Unlock()
				if ch != nil {
					ch <- r
				}
			}
		case frameExit:
			var x exitFrame
			_ = decode(b, &x)
			c.end(pty.Exit{Code: x.Code, Signal: x.Signal})
			_ = c.nc.Close()
			return
		}
	}
}

// end records how the seat ended, once, and fails what waits for a reply.
func (c *Conn) end(x pty.Exit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended, c.exit = true, x
	closeFile(c.master.Swap(nil))
	for id, ch := range c.replies {
		close(ch)
		delete(c.replies, id)
	}
	close(c.exited)
}

// Read implements pty.Conduit.
func (c *Conn) Read(p []byte) (int, bool, error) {
	if len(c.pending.b) == 0 {
		ch, ok := <-c.out
		if !ok {
			<-c.exited
			if c.exit.Lost != nil {
				return 0, false, c.exit.Lost
			}
			return 0, false, io.EOF
		}
		c.pending = ch
	}
	n := copy(p, c.pending.b)
	c.pending.b = c.pending.b[n:]
	return n, c.pending.paint, nil
}

// request sends a frame that the keeper answers and waits for the answer.
func (c *Conn) request(typ byte, id uint32, payload []byte) (replyFrame, error) {
	ch, err := c.ask(typ, id, payload)
	if err != nil {
		return replyFrame{}, err
	}
	return awaitReply(ch)
}

// ask sends one request and returns where its reply comes.
func (c *Conn) ask(typ byte, id uint32, payload []byte) (chan replyFrame, error) {
	ch := make(chan replyFrame, 1)
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return nil, pty.ErrNotRunning
	}
	c.replies[id] = ch
	c.mu.Unlock()
	if err := c.send(typ, payload); err != nil {
		c.mu.Lock()
		delete(c.replies, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("keeper: %w", err)
	}
	return ch, nil
}

// awaitReply waits for the reply ask said would come on ch.
func awaitReply(ch chan replyFrame) (replyFrame, error) {
	r, ok := <-ch
	if !ok {
		return replyFrame{}, pty.ErrNotRunning
	}
	if r.NotRunning {
		return r, pty.ErrNotRunning
	}
	if r.Err != "" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

func (c *Conn) send(typ byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(stallWrite))
	return writeFrame(c.nc, typ, payload)
}

func (c *Conn) sendJSON(typ byte, v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(stallWrite))
	return writeJSON(c.nc, typ, v)
}

// WriteParts implements pty.PartsWriter: every part's frames are sent
// before the first reply is awaited (the keeper writes them to the pty in
// order, each a write of its own), so a paste and its Enter cost one round
// trip to the keeper, not two. A part sent before another failed may
// still be typed; the total counts what the pty took of each part the
// keeper answered for, and is 0 when the frames could not be sent.
func (c *Conn) WriteParts(parts [][]byte) (int, error) {
	if m := c.master.Load(); m != nil {
		return writeMaster(m, parts)
	}
	// All the frames go in one write: the keeper reads them at once.
	var wire []byte
	var ids []uint32
	for _, p := range parts {
		for len(p) > 0 {
			n := min(len(p), maxFrame-4)
			id := c.nextID.Add(1)
			wire = binary.BigEndian.AppendUint32(appendHeader(wire, frameInput, 4+n), id)
			wire = append(wire, p[:n]...)
			ids = append(ids, id)
			p = p[n:]
		}
	}
	waits := make([]chan replyFrame, len(ids))
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return 0, pty.ErrNotRunning
	}
	for i, id := range ids {
		waits[i] = make(chan replyFrame, 1)
		c.replies[id] = waits[i]
	}
	c.mu.Unlock()
	if err := c.sendRaw(wire); err != nil {
		c.mu.Lock()
		for _, id := range ids {
			delete(c.replies, id)
		}
		c.mu.Unlock()
		// A short write may still have typed the first frames; their
		// replies are not waited for, so none is counted.
		return 0, fmt.Errorf("keeper: %w", err)
	}
	total := 0
	var first error
	for _, ch := range waits {
		r, err := awaitReply(ch)
		total += r.N
		if err != nil && first == nil {
			first = err
		}
	}
	return total, first
}

// writeMaster types parts into the pty master the keeper handed over,
// each a write of its own, in order, as the keeper would. A master closed
// at the end (the seat exited, the keeper went or another manager took
// the seat) or one whose program side has gone reads as not running.
func writeMaster(m *os.File, parts [][]byte) (int, error) {
	total := 0
	for _, p := range parts {
		n, err := m.Write(p)
		total += n
		if errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EIO) {
			return total, pty.ErrNotRunning
		}
		if err != nil {
			return total, fmt.Errorf("keeper: writing to the seat's pty: %w", err)
		}
	}
	return total, nil
}

// sendRaw writes frames already framed, in one write.
func (c *Conn) sendRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(stallWrite))
	_, err := c.nc.Write(b)
	return err
}

// Write implements pty.Conduit: it returns once the seat's pty took p.
func (c *Conn) Write(p []byte) (int, error) { return c.WriteParts([][]byte{p}) }

// Signal implements pty.Conduit.
func (c *Conn) Signal(sig syscall.Signal) error {
	id := c.nextID.Add(1)
	b, _ := jsonBytes(signalFrame{ID: id, Sig: int(sig)})
	_, err := c.request(frameSignal, id, b)
	return err
}

// Resize implements pty.Conduit; the keeper applies it in order with the
// rest.
func (c *Conn) Resize(cols, rows int) error {
	return c.sendJSON(frameResize, resizeFrame{Cols: cols, Rows: rows})
}

// AnswerQueries implements pty.Conduit.
func (c *Conn) AnswerQueries(on bool) error {
	return c.sendJSON(frameAnswers, answersFrame{On: on})
}

// Wait implements pty.Conduit.
func (c *Conn) Wait() pty.Exit {
	<-c.exited
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exit
}

// Close lets go of the seat; the keeper keeps it for the next manager.
func (c *Conn) Close() error {
	c.closing.Store(true)
	closeFile(c.master.Swap(nil))
	return c.nc.Close()
}

// Lost reports whether dir's keeper is gone: its record names a process
// that is no longer alive. A keeper that never wrote its record is gone
// too when its directory is older than a start may take.
func Lost(dir string) (bool, Record) {
	rec, _, err := ReadRecord(dir)
	if err != nil {
		fi, serr := os.Stat(dir)
		return serr != nil || time.Since(fi.ModTime()) > startWait, rec
	}
	return !rec.Keeper.Alive(), rec
}

// EndOrphan ends what is left of a seat whose keeper is gone: the seat's
// process, if it is still the one recorded, and the rest of its session.
// It returns how many processes it signalled.
func EndOrphan(rec Record) int {
	n := 0
	if rec.Seat.Alive() {
		n += procid.KillAll([]procid.ID{rec.Seat})
	} else if _, err := procid.Of(rec.Seat.PID); err == nil {
		// The pid is another process's now: its session may be too.
		return 0
	}
	if rec.Seat.PID > 0 {
		n += procid.KillAll(procid.Session(rec.Seat.PID))
	}
	return n
}
