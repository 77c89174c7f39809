package keeper

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/cotal-go/cotal/internal/procid"
)

// Version is the keeper protocol this binary speaks. A manager and a
// keeper of different versions refuse each other by name in the
// handshake, so an upgraded cotal says which seats an older keeper holds
// instead of garbling them.
const Version = 1

// maxFrame bounds one frame either way: output goes in chunks of at most
// the pty's read buffer (64 KiB), history in pieces of the same size.
const maxFrame = 1 << 20

// Frame types. The manager (client) sends hello, input, signal, resize,
// answers; the keeper sends welcome, refusal, output, paint, reply, exit.
const (
	frameHello   = 'H' // JSON hello
	frameWelcome = 'W' // JSON Welcome
	frameRefuse  = 'F' // JSON refusal: the handshake failed, and why
	frameOutput  = 'D' // raw output the program wrote
	framePaint   = 'P' // raw bytes that repaint the screen the keeper's emulator shows (a reattach, a resync)
	frameExit    = 'X' // JSON exitFrame: the program ended; nothing follows
	frameInput   = 'I' // 4-byte request id, then the bytes to type
	frameSignal  = 'S' // JSON signalFrame
	frameResize  = 'Z' // JSON resizeFrame; no reply
	frameAnswers = 'A' // JSON answersFrame; no reply
	frameReply   = 'R' // JSON replyFrame, to an input or a signal
)

// hello opens a connection: who asks, in which protocol.
type hello struct {
	V        int    `json:"v"`
	Instance string `json:"instance,omitempty"` // the manager instance taking the seat
}

// Welcome is the keeper's answer to a hello: the seat as it is now.
// Output follows: what was kept while no manager was connected (history),
// then a paint of the screen, then live output.
type Welcome struct {
	V          int       `json:"v"`
	Keeper     procid.ID `json:"keeper"`
	Seat       procid.ID `json:"seat"`
	StartedMs  int64     `json:"startedMs"`
	Cols       int       `json:"cols"`
	Rows       int       `json:"rows"`
	LastOutMs  int64     `json:"lastOutputMs,omitempty"` // when the program last wrote; 0 never
	Sandbox    string    `json:"sandbox"`                // what the launcher achieved, as ps shows it
	Nested     string    `json:"nested,omitempty"`       // why a sandbox of the seat's own cannot run in it
	Exited     bool      `json:"exited,omitempty"`       // it ended already; the exit frame follows the paint
	Detached   *Detached `json:"detached,omitempty"`     // output written while no manager was connected
	Superseded string    `json:"superseded,omitempty"`   // the instance whose connection this one replaced
	// Master says the pty's master side comes with this frame (SCM_RIGHTS):
	// the manager types into it directly, without a round trip to the
	// keeper. A keeper that sends none is typed into through input frames.
	Master bool `json:"master,omitempty"`
}

// Detached is what a keeper kept of the output written while no manager
// was connected: the newest Kept bytes, Dropped older ones, since SinceMs.
type Detached struct {
	SinceMs int64 `json:"sinceMs"`
	Kept    int64 `json:"kept"`
	Dropped int64 `json:"dropped"`
}

type refusal struct {
	V       int    `json:"v"`
	Message string `json:"message"`
}

type exitFrame struct {
	Code   int    `json:"code"`
	Signal string `json:"signal,omitempty"`
}

type signalFrame struct {
	ID  uint32 `json:"id"`
	Sig int    `json:"sig"`
}

type resizeFrame struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

type answersFrame struct {
	On bool `json:"on"`
}

type replyFrame struct {
	ID         uint32 `json:"id"`
	N          int    `json:"n,omitempty"`
	Err        string `json:"err,omitempty"`
	NotRunning bool   `json:"notRunning,omitempty"`
}

// errFrameTooLarge is a frame over maxFrame: the peer is not a keeper of
// this protocol.
var errFrameTooLarge = errors.New("keeper: frame too large")

// writeFrame writes one frame in one write, so frames of concurrent
// writers never interleave as long as each holds the connection's write
// lock.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	if len(payload) > maxFrame {
		return errFrameTooLarge
	}
	b := append(appendHeader(make([]byte, 0, 5+len(payload)), typ, len(payload)), payload...)
	_, err := w.Write(b)
	return err
}

// appendHeader appends a frame's type and length to b.
func appendHeader(b []byte, typ byte, n int) []byte {
	return binary.BigEndian.AppendUint32(append(b, typ), uint32(n))
}

func jsonBytes(v any) ([]byte, error) { return json.Marshal(v) }

func writeJSON(w io.Writer, typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFrame(w, typ, b)
}

// appendJSONFrame appends v, JSON encoded, as a frame of type typ; v is
// one of this protocol's frames, which always encode.
func appendJSONFrame(b []byte, typ byte, v any) []byte {
	p, _ := json.Marshal(v)
	return append(appendHeader(b, typ, len(p)), p...)
}

// readFrame reads one frame; buf is reused when it is large enough.
func readFrame(r io.Reader, buf []byte) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:5])
	if n > maxFrame {
		return 0, nil, errFrameTooLarge
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return h[0], buf, nil
}

func decode(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("keeper: garbled frame: %w", err)
	}
	return nil
}
