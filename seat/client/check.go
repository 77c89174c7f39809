package client

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// The checks here refuse, before anything is sent, what a manager would
// refuse: each error is the person's input, in the words of cotal's
// command line.

// MinFollowEvery keeps a screen follower from flooding the manager.
const MinFollowEvery = 50 * time.Millisecond

// MaxAnswerMessage bounds the reason told to a model with a deny
// (AnswerArgs.Message).
const MaxAnswerMessage = 2000

// CheckName refuses a seat name that is not a token; empty is none asked
// for.
func (a SpawnArgs) CheckName() error {
	if a.Name != "" && !wire.ValidToken(a.Name) {
		return fmt.Errorf("--name %q: a seat's name is one token of A-Z a-z 0-9 _ (at most %d characters)", a.Name, wire.MaxTokenLength)
	}
	return nil
}

// CheckFollowEvery refuses a screen follower asking more often than
// MinFollowEvery.
func CheckFollowEvery(every time.Duration) error {
	if every < MinFollowEvery {
		return fmt.Errorf("--interval %s: at least %s", every, MinFollowEvery)
	}
	return nil
}

// CheckScreenUntil refuses a screen wait the manager would refuse: no
// text, a text over 1024 characters, or a wait outside 1ms to
// MaxScreenWait.
func CheckScreenUntil(text string, wait time.Duration) error {
	switch n := utf8.RuneCountInString(text); {
	case n == 0:
		return fmt.Errorf("--until: say what text to wait for")
	case n > MaxScreenUntil:
		return fmt.Errorf("--until: %d characters; at most %d", n, MaxScreenUntil)
	case wait < time.Millisecond || wait > MaxScreenWait:
		return fmt.Errorf("--wait %s: 1ms to %s", wait, MaxScreenWait)
	}
	return nil
}

// CheckTyped refuses what an input (keys false) or a keys command would
// not type: text of no character or more than MaxInput; more than MaxKeys
// keys, or keys asked to press Enter after them (Enter is named as a
// key). The key names themselves are seat/pty's to read.
func CheckTyped(text string, keys []string, asKeys, enter bool) error {
	switch n := utf8.RuneCountInString(text); {
	case asKeys && !enter:
		return fmt.Errorf("--no-enter has no meaning with --keys: name Enter when you want it")
	case asKeys && len(keys) > MaxKeys:
		return fmt.Errorf("%d keys: --keys takes at most %d at once", len(keys), MaxKeys)
	case !asKeys && (n == 0 || n > MaxInput):
		return fmt.Errorf("text: %d characters; input takes 1 to %d", n, MaxInput)
	}
	return nil
}

// AnswerMessage is the reason words give an answer: none for an allow,
// at most MaxAnswerMessage bytes for a deny.
func AnswerMessage(decision string, words []string) (string, error) {
	if decision == AnswerAllow && len(words) > 0 {
		return "", fmt.Errorf("approve takes the seat's name only; a reason goes with deny")
	}
	message := strings.Join(words, " ")
	if len(message) > MaxAnswerMessage {
		return "", fmt.Errorf("the reason is %d bytes; at most %d", len(message), MaxAnswerMessage)
	}
	return message, nil
}

// SpawnRefusal is a manager's refusal of a spawn, as a sentence saying
// that nothing was started, or that it cannot be told whether it was.
type SpawnRefusal struct {
	msg string
	// Input marks a refusal of what was asked: no such persona, a file
	// that does not load, a name that is not a token or is taken.
	Input bool
}

func (e *SpawnRefusal) Error() string { return e.msg }

// RefusedSpawn is err, a Spawn of persona's failure, as a SpawnRefusal
// when the manager refused it; any other error is returned as it is.
func RefusedSpawn(persona string, err error) error {
	e := proto.AsError(err)
	if e == nil {
		return err
	}
	if e.EffectiveOutcome() == proto.Unknown && !badSpawn(e.Code) {
		return &SpawnRefusal{msg: fmt.Sprintf("cannot tell whether %s was spawned: %s; see `cotal ps`", persona, e.Message)}
	}
	return &SpawnRefusal{msg: fmt.Sprintf("cannot spawn %s: %s; nothing was started", persona, strings.TrimSuffix(e.Message, ".")), Input: badSpawn(e.Code)}
}

func badSpawn(code string) bool {
	switch code {
	case proto.CodeBadRequest, proto.CodeNotFound, proto.CodeFailedPrecondition, proto.CodeAlreadyExists:
		return true
	}
	return false
}
