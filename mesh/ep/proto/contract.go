package proto

import (
	"encoding/json"
)

// CommandInfo is one command as a cluster document and describe name it.
type CommandInfo struct {
	Name         string   `json:"name"`
	Class        string   `json:"class"`
	Targeted     bool     `json:"targeted"`
	Modes        []Mode   `json:"modes,omitempty"` // the registered authorization modes; ModeNone is written as ""
	Capability   string   `json:"capability"`
	InputDigest  string   `json:"inputDigest"`
	OutputDigest string   `json:"outputDigest"`
	Traits       []string `json:"traits,omitempty"`
}

// ClusterDocument is the §7 cluster: a versioned, content-addressed set of commands.
type ClusterDocument struct {
	URN        string            `json:"urn"`
	Revision   int               `json:"revision"`
	Attributes []json.RawMessage `json:"attributes"`
	Commands   []CommandInfo     `json:"commands"`
	Events     []json.RawMessage `json:"events"`
}

// Command returns the named command of the cluster.
func (d ClusterDocument) Command(name string) (CommandInfo, bool) {
	for _, c := range d.Commands {
		if c.Name == name {
			return c, true
		}
	}
	return CommandInfo{}, false
}

// ClusterRef is one cluster in a describe answer: its closure digest, the commands visible to the caller and, when the whole cluster is visible, the document itself.
type ClusterRef struct {
	Digest   string           `json:"digest"`
	Commands []string         `json:"commands"`
	Document *ClusterDocument `json:"document,omitempty"`
}

// Protocol is the control-surface protocol version an endpoint speaks.
type Protocol struct {
	V int `json:"v"`
}

// Descriptor is what an endpoint says about itself.
type Descriptor struct {
	Endpoint     string       `json:"endpoint"`
	Owner        string       `json:"owner"`
	EndpointType string       `json:"endpointType,omitempty"`
	Protocol     Protocol     `json:"protocol"`
	Clusters     []ClusterRef `json:"clusters"`
}

// DescribeAnswer is the data of a describe reply. Artifacts carries the public answer's contract documents by digest, so a caller with no right to read the contract stream (an agent) can still verify every digest the descriptor names.
type DescribeAnswer struct {
	Public     bool                       `json:"public"`
	Descriptor Descriptor                 `json:"descriptor"`
	Artifacts  map[string]json.RawMessage `json:"artifacts,omitempty"`
}
