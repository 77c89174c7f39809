package attach

import (
	"errors"
	"fmt"

	"github.com/cotal-go/cotal/mesh/wire"
)

var (
	// ErrInvalidGrant is the kind of a grant or session subject that breaks its schema or grammar.
	ErrInvalidGrant = errors.New("invalid session grant")

	// ErrWindowFull is returned by Rail.Send when the peer has not acknowledged a whole window of frames; nothing was sent (spec: resource-exhausted, no buffering).
	ErrWindowFull = errors.New("attach: session window is full")

	// ErrFrameTooLarge is returned by Rail.Send when the encoded frame would exceed MaxFrame; nothing was sent.
	ErrFrameTooLarge = errors.New("attach: session frame too large")

	// ErrRailClosed is returned by Rail.Send once the rail has closed, by either side or by a fault.
	ErrRailClosed = errors.New("attach: session rail is closed")

	// ErrPeerClosed is a rail's Err when the other side sent its close frame.
	ErrPeerClosed = errors.New("attach: the other side closed the session")

	errGarbled = errors.New("garbled frame")
)

var refuse = wire.Refuse

// Fault names why a rail broke; the session is closed and re-established.
type Fault string

// The rail faults of spec §12.
const (
	FaultGap           Fault = "gap"            // a frame's seq skipped one
	FaultCreditOverrun Fault = "credit-overrun" // the peer sent past the window, or acked frames never sent
	FaultFlood         Fault = "flood"          // more frames queued than the window holds
	FaultGarbled       Fault = "garbled-frame"  // a frame that is not one of the three shapes
	FaultSubscription  Fault = "subscription"   // the subscription failed
	FaultHandler       Fault = "handler"        // the receiving side refused a frame
	FaultPublish       Fault = "publish"        // a publish failed
	FaultStall         Fault = "stall"          // no word from the peer, or no credit, for the stall bound
	FaultSeqExhausted  Fault = "seq-exhausted"  // the sequence reached 2^53-1
)

// FaultError is a rail's Err after a fault.
type FaultError struct {
	Fault  Fault
	Detail string
}

func (e *FaultError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("attach: session rail broke: %s", e.Fault)
	}
	return fmt.Sprintf("attach: session rail broke: %s: %s", e.Fault, e.Detail)
}

// Reason is why a session ended, as the end payload carries it.
type Reason string

// The end reasons of spec §12.
const (
	ReasonProcessExit    Reason = "process-exit"    // the seat's process exited
	ReasonClosed         Reason = "closed"          // a side closed it, or the rail broke
	ReasonExpired        Reason = "expired"         // the grant's exp passed
	ReasonTargetDespawn  Reason = "target-despawn"  // the seat was stopped
	ReasonManagerRestart Reason = "manager-restart" // the serving manager is going away; re-attach
)

func validReason(r Reason) bool {
	switch r {
	case ReasonProcessExit, ReasonClosed, ReasonExpired, ReasonTargetDespawn, ReasonManagerRestart:
		return true
	}
	return false
}
