package mesh

import (
	"net"
	"net/url"
	"time"
)

// redialer dials the address its function names now, whatever address
// the connection was made for: a mesh that restarted on another port is
// found again by every reconnect.
type redialer func() string

func (r redialer) Dial(network, address string) (net.Conn, error) {
	if u, err := url.Parse(r()); err == nil && u.Host != "" {
		address = u.Host
	}
	return net.DialTimeout(network, address, 5*time.Second)
}
