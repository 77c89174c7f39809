package testutil

import "net"

// ReachableIP is an address a mesh reachable from other machines is
// tested on: this machine's first non-loopback IPv4 address on an
// interface that is up, so the test binds where another machine would
// dial; 127.0.0.1 where the machine has none (the listener is then still
// in its TLS mode, since any --host asks for it).
func ReachableIP() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return "127.0.0.1"
	}
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}
