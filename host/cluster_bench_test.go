package host_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// benchMesh is an authenticated mesh to measure on: the embedded broker,
// or a trusted 3-node cluster with R3 streams.
type benchMesh struct {
	h   *host.Host
	url string
	tls *tls.Config // verifies the server's certificate by its pin; nil on loopback
}

func newBenchMesh(b *testing.B, where string) benchMesh {
	b.Helper()
	p := config.Paths{Space: "bench", StoreDir: b.TempDir()}
	if where == "embedded" || where == "tls" {
		cfg := host.Config{Paths: p, NoManager: true}
		if where == "tls" {
			cfg.Host = testutil.ReachableIP()
		}
		h, err := host.Start(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = h.Close() })
		m := benchMesh{h: h, url: h.Broker().URL()}
		if where == "tls" {
			if m.tls, err = (config.TLSTrust{Pin: h.Broker().TLSPin()}).ClientConfig(); err != nil {
				b.Fatal(err)
			}
		}
		return m
	}
	c := trustedCluster(b, p)
	return benchMesh{h: startExternalAt(b, p, false, c.URLs(), ""), url: c.URL()}
}

func (m benchMesh) endpoint(b *testing.B, name string, subscribe []string, o mesh.Options) *mesh.Endpoint {
	b.Helper()
	creds, _ := testmesh.Mint(b, m.h.Broker(), broker.Identity{Space: "bench", Principal: wire.Principal{Owner: "local", Actor: name},
		Subscribe: subscribe, AllowSubscribe: subscribe, AllowPublish: []string{"team"}})
	return m.connect(b, creds, o)
}

func (m benchMesh) connect(b *testing.B, creds string, o mesh.Options) *mesh.Endpoint {
	b.Helper()
	o.URL, o.Creds, o.TLS = m.url, creds, m.tls
	e, err := mesh.Connect(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkPastOneMachine is a DM's hand-over (send until the recipient
// holds it) and a durable post's fan-out to 10 members (send until the
// last holds its stored copy), on the embedded single server and on a
// 3-node cluster with R3 streams, in the same run:
//
//	go test -run XXX -bench PastOneMachine -benchtime 100x ./host
func BenchmarkPastOneMachine(b *testing.B) {
	for _, where := range []string{"embedded", "cluster-r3"} {
		b.Run("dm/"+where, func(b *testing.B) { benchDM(b, newBenchMesh(b, where)) })
		b.Run("durable-fanout-10/"+where, func(b *testing.B) {
			m := newBenchMesh(b, where)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const n = 10
			got := make(chan struct{}, n)
			for i := range n {
				name := fmt.Sprintf("m%02d", i)
				creds, _ := testmesh.Mint(b, m.h.Broker(), broker.Identity{Space: "bench", Principal: wire.Principal{Owner: "local", Actor: name},
					Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}, AllowPublish: []string{}})
				// Join durably once, then read only the stored copies.
				_ = m.connect(b, creds, mesh.Options{OneShot: true}).Close()
				e := m.connect(b, creds, mesh.Options{Subscribe: []string{}})
				go func() {
					for {
						it, err := e.Next(ctx)
						if err != nil {
							return
						}
						got <- struct{}{}
						_ = it.Ack()
					}
				}()
			}
			from := m.endpoint(b, "poster", []string{}, mesh.Options{OneShot: true})
			var lat []time.Duration
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if _, err := from.Send(ctx, "team", fmt.Sprintf("post %d", i)); err != nil {
					b.Fatal(err)
				}
				for range n {
					<-got
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

// benchDM measures a DM's hand-over on m: send until the recipient holds
// it.
func benchDM(b *testing.B, m benchMesh) {
	to := m.endpoint(b, "alice", []string{}, mesh.Options{})
	from := m.endpoint(b, "sender", []string{}, mesh.Options{OneShot: true})
	ctx := context.Background()
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := from.DM(ctx, "local.alice", "ping"); err != nil {
			b.Fatal(err)
		}
		it, err := to.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		b.StopTimer()
		_ = it.Ack()
		b.StartTimer()
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkDMOverTLS is a DM's hand-over between two clients of the
// embedded broker on plain loopback, and between two that reach it as
// other machines would (up --host: this machine's own address, TLS with
// the certificate pinned), in the same run:
//
//	go test -run XXX -bench DMOverTLS -benchtime 200x ./host
func BenchmarkDMOverTLS(b *testing.B) {
	for _, where := range []string{"embedded", "tls"} {
		b.Run(where, func(b *testing.B) {
			m := newBenchMesh(b, where)
			if where == "tls" && !strings.HasPrefix(m.url, "tls://") {
				b.Fatalf("url %s: want the TLS listener", m.url)
			}
			benchDM(b, m)
		})
	}
}
