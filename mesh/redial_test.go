package mesh

import (
	"net"
	"testing"
)

// A redial follows what broker.json names: one server (the embedded
// broker, wherever it listens now) whatever address the pool tries, and
// for a cluster the server the pool tries, when it is one of those named.
func TestRedialerDialsWhatTheRecordNames(t *testing.T) {
	var ls []net.Listener
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ls = append(ls, l)
	}
	a, b := ls[0].Addr().String(), ls[1].Addr().String()
	for _, c := range []struct {
		name, record, tried string
		want                net.Listener
	}{
		{"one server, another address tried", "nats://" + a, b, ls[0]},
		{"a cluster, its second server tried", "nats://" + a + ",nats://" + b, b, ls[1]},
		{"a cluster, an address it does not name", "nats://" + b + "," + a, "127.0.0.1:1", ls[1]},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := redialer(func() string { return c.record }).Dial("tcp", c.tried)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if got := conn.RemoteAddr().String(); got != c.want.Addr().String() {
				t.Fatalf("dialled %s, want %s", got, c.want.Addr())
			}
		})
	}
}
