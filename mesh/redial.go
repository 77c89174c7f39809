package mesh

import (
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// redialer dials the address its function names now, whatever address
// the connection was made for: a mesh that restarted on another port is
// found again by every reconnect. A mesh on servers cotal did not start
// names several (nats://a,nats://b): the address the client's pool tries
// is dialled when it is one of them, so the pool still rotates through
// the cluster, else the first.
type redialer func() string

func (r redialer) Dial(network, address string) (net.Conn, error) {
	var hosts []string
	for _, s := range strings.Split(r(), ",") {
		if !strings.Contains(s, "://") {
			s = "nats://" + s
		}
		if u, err := url.Parse(strings.TrimSpace(s)); err == nil && u.Host != "" {
			hosts = append(hosts, u.Host)
		}
	}
	if len(hosts) > 0 && !(len(hosts) > 1 && slices.Contains(hosts, address)) {
		address = hosts[0]
	}
	return net.DialTimeout(network, address, 5*time.Second)
}
