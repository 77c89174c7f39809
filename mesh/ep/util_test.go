package ep_test

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

func errNot(what string) error { return errors.New("not yet: " + what) }

func jsExpectFirst() jetstream.PublishOpt { return jetstream.WithExpectLastSequencePerSubject(0) }
