package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrNoChatStream is returned when the space has no channel history
// stream: it was never provisioned.
var ErrNoChatStream = errors.New("no channel history stream")

// Retention is how much channel history a space keeps, and holds now.
type Retention struct {
	MaxAge       time.Duration // posts older than this go; 0 keeps them
	MaxPerSender int64         // each sender's newest posts per channel
	Messages     uint64
	Bytes        uint64
}

// minDupWindow is the duplicate window of a stream with no age limit: a
// send retried with its id within it is stored once.
const minDupWindow = 2 * time.Minute

// chat opens the space's CHAT stream on nc, which must act as the
// operator: retention is the operator's.
func chat(ctx context.Context, nc *nats.Conn, space string) (jetstream.JetStream, jetstream.Stream, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, nil, err
	}
	st, err := js.Stream(ctx, wire.ChatStream(space))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil, fmt.Errorf("space %s: %w", space, ErrNoChatStream)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("opening channel history: %w (retention needs the operator's credential)", err)
	}
	return js, st, nil
}

// ChatRetention reads the space's channel retention.
func ChatRetention(ctx context.Context, nc *nats.Conn, space string) (Retention, error) {
	_, st, err := chat(ctx, nc, space)
	if err != nil {
		return Retention{}, err
	}
	return retention(ctx, st)
}

// SetChatRetention changes the space's channel retention: maxAge when not
// nil (0: no age limit, else at least a second), maxPerSender when above
// 0. A lower limit deletes what it no longer keeps at once. The duplicate
// window follows the age: never longer than it, and minDupWindow once
// there is none.
func SetChatRetention(ctx context.Context, nc *nats.Conn, space string, maxAge *time.Duration, maxPerSender int64) (Retention, error) {
	if maxAge != nil && (*maxAge < 0 || *maxAge > 0 && *maxAge < time.Second) {
		return Retention{}, fmt.Errorf("max age %s: give 0 (no limit) or at least 1s", *maxAge)
	}
	if maxPerSender < 0 {
		return Retention{}, fmt.Errorf("max per sender %d: give at least 1", maxPerSender)
	}
	js, st, err := chat(ctx, nc, space)
	if err != nil {
		return Retention{}, err
	}
	cfg := st.CachedInfo().Config
	if maxAge != nil {
		cfg.MaxAge = *maxAge
		if cfg.MaxAge > 0 && cfg.Duplicates > cfg.MaxAge {
			cfg.Duplicates = cfg.MaxAge
		}
		if cfg.MaxAge == 0 && cfg.Duplicates < minDupWindow {
			cfg.Duplicates = minDupWindow
		}
	}
	if maxPerSender > 0 {
		cfg.MaxMsgsPerSubject = maxPerSender
	}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return Retention{}, fmt.Errorf("changing retention: %w", err)
	}
	if st, err = js.Stream(ctx, cfg.Name); err != nil {
		return Retention{}, err
	}
	return retention(ctx, st)
}

func retention(ctx context.Context, st jetstream.Stream) (Retention, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return Retention{}, err
	}
	return Retention{MaxAge: info.Config.MaxAge, MaxPerSender: info.Config.MaxMsgsPerSubject, Messages: info.State.Msgs, Bytes: info.State.Bytes}, nil
}

// StreamCount is how many messages a stream held when it was counted.
type StreamCount struct {
	Stream   string `json:"stream"`
	Messages uint64 `json:"messages"`
}

// ClearHistory counts what the space's channel history (and, with dms,
// its stored DMs) holds and, with force, purges it: each stream is looked
// up once, so one that disappears before its purge is an error naming it.
// Tasks are never touched.
func ClearHistory(ctx context.Context, nc *nats.Conn, space string, dms, force bool) ([]StreamCount, error) {
	js, chatStream, err := chat(ctx, nc, space)
	if err != nil {
		return nil, err
	}
	streams := []jetstream.Stream{chatStream}
	if dms {
		st, err := js.Stream(ctx, wire.DMStream(space))
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", wire.DMStream(space), err)
		}
		streams = append(streams, st)
	}
	counts := make([]StreamCount, len(streams))
	for i, s := range streams {
		counts[i] = StreamCount{Stream: s.CachedInfo().Config.Name, Messages: s.CachedInfo().State.Msgs}
	}
	if !force {
		return counts, nil
	}
	testHookBeforePurge()
	for i, s := range streams {
		if err := s.Purge(ctx); err != nil {
			return counts, fmt.Errorf("clearing %s: %w", counts[i].Stream, err)
		}
	}
	return counts, nil
}

// testHookBeforePurge runs between counting and purging; a test removes a
// stream there, as another process could.
var testHookBeforePurge = func() {}
