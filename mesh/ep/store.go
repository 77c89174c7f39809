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

// lastOnSubject reads the newest message of subject through the stream's message-get API (no stream info, no consumer), so a reader needs one grant row per stream.
func lastOnSubject(ctx context.Context, nc *nats.Conn, stream, subject string) ([]byte, uint64, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": subject})
	msg, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s from %s: %w", subject, stream, err)
	}
	var resp struct {
		Message *struct {
			Subject string `json:"subject"`
			Seq     uint64 `json:"seq"`
			Data    []byte `json:"data"`
		} `json:"message"`
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, 0, fmt.Errorf("reading %s from %s: %w", subject, stream, err)
	}
	if resp.Error != nil {
		if resp.Error.Code == 404 {
			return nil, 0, fmt.Errorf("%s in %s: %w", subject, stream, ErrNoMessage)
		}
		return nil, 0, fmt.Errorf("reading %s from %s: %s (%d)", subject, stream, resp.Error.Description, resp.Error.ErrCode)
	}
	if resp.Message == nil || resp.Message.Subject != subject {
		return nil, 0, fmt.Errorf("reading %s from %s: the answer names another message", subject, stream)
	}
	return resp.Message.Data, resp.Message.Seq, nil
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
