package wire

import "time"

// Rungs of a delivery receipt, in order: the broker stored the message;
// the recipient's connector took it into its inbox; it was injected into
// the recipient's terminal, or the recipient pulled it with an inbox read;
// its stored copy was acked. Injected and pulled are one rung.
const (
	RungStored   = "stored"
	RungTaken    = "taken"
	RungInjected = "injected"
	RungPulled   = "pulled"
	RungAcked    = "acked"
)

// Rungs lists the rungs a sender may wait for, in order.
var Rungs = []string{RungStored, RungTaken, RungInjected, RungPulled, RungAcked}

// RungRank orders the rungs (injected and pulled share one rank); 0 for
// an unknown name.
func RungRank(rung string) int {
	switch rung {
	case RungStored:
		return 1
	case RungTaken:
		return 2
	case RungInjected, RungPulled:
		return 3
	case RungAcked:
		return 4
	}
	return 0
}

// DeliveryNote is one rung a message reached at its recipient, published
// by the recipient's connector (always a trusted process: a seat's
// manager or the delivery service) on the sender's receipt subject. Why
// says what holds it at this rung, or how it was settled without being
// read ("dropped: channel muted").
type DeliveryNote struct {
	ID   string    `json:"id"`
	To   string    `json:"to"`   // the recipient's principal id
	Rung string    `json:"rung"` // one of the Rung constants
	Why  string    `json:"why,omitempty"`
	At   time.Time `json:"at"`
}

// ReceiptSubject is where the recipient's connector publishes the notes
// on message id sent by sender; only trusted connections may publish
// there, and only the sender may subscribe. An id that cannot be one
// subject token (another implementation's) gets no receipts: ok is false.
func ReceiptSubject(space string, sender Principal, id string) (subject string, ok bool) {
	if !TokenID(id) {
		return "", false
	}
	return ReceiptFilter(space, sender) + "." + id, true
}

// TokenID reports whether a message id fits a subject token: 1 to 64 of
// A-Z a-z 0-9 - _, as every id this module makes does.
func TokenID(id string) bool {
	return id != "" && len(id) <= 64 && AllBytes(id, func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
	})
}

// ReceiptFilter is the prefix of every receipt subject of one sender,
// without the trailing id token.
func ReceiptFilter(space string, sender Principal) string {
	return Root(space) + ".rcpt." + sender.Owner + "." + sender.Actor
}
