package main

import "github.com/cotal-go/cotal/host"

// localManager is the manager a spawn goes to when it names none: on a
// mesh other hosts share, the one this machine runs; else any ("").
func localManager(g *globals) string {
	if g.actsAsAgent() {
		return ""
	}
	_, p, _, err := g.paths()
	if err != nil {
		return ""
	}
	return host.LocalManager(p)
}
