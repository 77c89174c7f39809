package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNoMessage is returned by a stream read when the subject holds no message.
var ErrNoMessage = errors.New("no message on subject")

// ErrExists is returned by a create-only write when the subject already holds a message.
var ErrExists = errors.New("subject already written")

// storedMsg is one message of a stream as its message-get API answers.
type storedMsg struct {
	Subject string `json:"subject"`
	Seq     uint64 `json:"seq"`
	Data    []byte `json:"data"`
}

// getMsg asks a stream's message-get API (no stream info, no consumer, so
// a reader needs one grant row per stream) for one message; a 404 is
// ErrNoMessage.
func getMsg(ctx context.Context, nc *nats.Conn, stream, subject string, req map[string]any) (storedMsg, error) {
	body, _ := json.Marshal(req)
	msg, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, body)
	if err != nil {
		return storedMsg{}, fmt.Errorf("reading %s from %s: %w", subject, stream, err)
	}
	var resp struct {
		Message *storedMsg `json:"message"`
		Error   *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return storedMsg{}, fmt.Errorf("reading %s from %s: %w", subject, stream, err)
	}
	if resp.Error != nil {
		if resp.Error.Code == 404 {
			return storedMsg{}, fmt.Errorf("%s in %s: %w", subject, stream, ErrNoMessage)
		}
		return storedMsg{}, fmt.Errorf("reading %s from %s: %s (%d)", subject, stream, resp.Error.Description, resp.Error.ErrCode)
	}
	if resp.Message == nil || resp.Message.Subject != subject {
		return storedMsg{}, fmt.Errorf("reading %s from %s: the answer names another message", subject, stream)
	}
	return *resp.Message, nil
}

// maxForeign bounds how many unreadable messages a read of one subject
// steps over before it gives up.
const maxForeign = 1000

// subjectRead is what validOnSubject found on a subject.
type subjectRead struct {
	data    []byte
	seq     uint64 // of data
	skipped int    // messages stepped over as not valid
	last    uint64 // the subject's newest sequence
}

// validOnSubject reads the message of subject that valid accepts: the
// newest when it does, else the oldest one that does. Whatever else is on
// the subject (a message nobody entitled wrote: garbage, or an answer of
// the server aimed there) is stepped over and counted; none accepted is
// ErrNoMessage, with what was stepped over still counted.
func validOnSubject(ctx context.Context, nc *nats.Conn, stream, subject string, valid func([]byte) bool) (subjectRead, error) {
	last, err := getMsg(ctx, nc, stream, subject, map[string]any{"last_by_subj": subject})
	if err != nil {
		return subjectRead{}, err
	}
	r := subjectRead{last: last.Seq}
	if valid(last.Data) {
		r.data, r.seq = last.Data, last.Seq
		return r, nil
	}
	r.skipped = 1
	for next := uint64(1); next < last.Seq && r.skipped <= maxForeign; {
		m, err := getMsg(ctx, nc, stream, subject, map[string]any{"seq": next, "next_by_subj": subject})
		if errors.Is(err, ErrNoMessage) || err == nil && m.Seq >= last.Seq {
			break
		}
		if err != nil {
			return r, err
		}
		if valid(m.Data) {
			r.data, r.seq = m.Data, m.Seq
			return r, nil
		}
		r.skipped++
		next = m.Seq + 1
	}
	return r, fmt.Errorf("%s in %s: %d unreadable message(s) and no valid one: %w", subject, stream, r.skipped, ErrNoMessage)
}

// writeFact writes data as the one fact of subject, create-only. When the
// subject already holds a valid fact, that one is returned with ErrExists;
// when it holds only messages that are not (written by no one entitled),
// data is written after them, compare-and-set on the newest, so that the
// first valid fact stays the one every reader finds.
func writeFact(ctx context.Context, js jetstream.JetStream, nc *nats.Conn, stream, subject string, data []byte, valid func([]byte) bool, logf func(string, ...any)) ([]byte, error) {
	for range 3 {
		_, err := createOnly(ctx, js, subject, data)
		if !errors.Is(err, ErrExists) {
			return nil, err
		}
		r, err := validOnSubject(ctx, nc, stream, subject, valid)
		if r.skipped > 0 && logf != nil {
			logf("%s holds %d message(s) that are not a valid fact; they are skipped", subject, r.skipped)
		}
		if err == nil {
			return r.data, fmt.Errorf("%s: %w", subject, ErrExists)
		}
		if !errors.Is(err, ErrNoMessage) {
			return nil, err
		}
		_, err = js.Publish(ctx, subject, data, jetstream.WithExpectLastSequencePerSubject(r.last))
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
			continue // someone wrote meanwhile: read again
		}
		if err != nil {
			return nil, fmt.Errorf("writing %s after foreign messages: %w", subject, err)
		}
		return nil, nil
	}
	return nil, fmt.Errorf("writing %s: it keeps changing under the write", subject)
}

// createOnly publishes data as the first and only message on subject (Nats-Expected-Last-Subject-Sequence: 0); a second write is ErrExists.
func createOnly(ctx context.Context, js jetstream.JetStream, subject string, data []byte) (uint64, error) {
	ack, err := js.Publish(ctx, subject, data, jetstream.WithExpectLastSequencePerSubject(0))
	if err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
			return 0, fmt.Errorf("%s: %w", subject, ErrExists)
		}
		return 0, fmt.Errorf("writing %s: %w", subject, err)
	}
	return ack.Sequence, nil
}
