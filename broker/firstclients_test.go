package broker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testmesh"
)

// The first lookups of the space's account come at once on a fresh store
// (a leaf link's as it dials its hub, the mesh's first clients). The
// server shows an account to a second lookup before it has enabled the
// account's JetStream, and that enable makes and removes the streams
// folder: a client let in meanwhile got "no responders" for its stream, or
// a stream whose files were gone. Each start here lets eight clients in at
// once, each making a stream; every one is made and on disk.
func TestFirstClientsOfAFreshStoreAllMakeTheirStreams(t *testing.T) {
	const clients = 8
	for i := range 25 {
		paths := config.Paths{Space: "first", StoreDir: t.TempDir()}
		b, err := broker.Start(broker.Options{Paths: paths})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, clients)
		for j := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				nc, err := b.Connect(fmt.Sprintf("first-%d", j))
				if err != nil {
					errs[j] = err
					return
				}
				defer nc.Close()
				js, err := jetstream.New(nc)
				if err == nil {
					_, err = js.CreateStream(testmesh.Ctx(t), jetstream.StreamConfig{
						Name: fmt.Sprintf("S%d", j), Subjects: []string{fmt.Sprintf("s%d.>", j)}})
				}
				errs[j] = err
			}()
		}
		wg.Wait()
		streams := filepath.Join(paths.JetStreamDir(), "jetstream", b.Authority().AccountKey(), "streams")
		for j, err := range errs {
			if err != nil {
				t.Errorf("start %d: client %d making its stream: %v", i, j, err)
			} else if _, err := os.Stat(filepath.Join(streams, fmt.Sprintf("S%d", j), "meta.inf")); err != nil {
				t.Errorf("start %d: stream S%d was made but its files are gone: %v", i, j, err)
			}
		}
		b.Shutdown()
		if t.Failed() {
			return
		}
	}
}
