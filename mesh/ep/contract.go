package ep

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// publishSchema stores a schema's document and its closure manifest; it returns nothing new, the digests are the schema's own.
func publishSchema(ctx context.Context, store *ContractStore, s *Schema) error {
	if _, err := store.Put(ctx, s.doc); err != nil {
		return err
	}
	m, err := Marshal(closureManifest{V: 1, Root: s.artifact, Members: []string{}})
	if err != nil {
		return err
	}
	d, err := store.Put(ctx, m)
	if err != nil {
		return err
	}
	if d != s.closure {
		return fmt.Errorf("ep: closure manifest of %s stored as %s, want %s", s.artifact, d, s.closure)
	}
	return nil
}

// publishCluster stores a cluster document, then its closure manifest over every schema it reaches, and returns the closure digest.
func publishCluster(ctx context.Context, store *ContractStore, doc ClusterDocument, schemas []*Schema) (string, error) {
	raw, err := Marshal(doc)
	if err != nil {
		return "", err
	}
	root, err := store.Put(ctx, raw)
	if err != nil {
		return "", err
	}
	var members []string
	for _, s := range schemas {
		members = append(members, s.closure, s.artifact)
	}
	slices.Sort(members)
	members = slices.Compact(members)
	if members == nil {
		members = []string{}
	}
	m, err := Marshal(closureManifest{V: 1, Root: root, Members: members})
	if err != nil {
		return "", err
	}
	return store.Put(ctx, m)
}

// fetchClosure reads and verifies a closure manifest and its root document.
func fetchClosure(ctx context.Context, store *ContractStore, digest string) ([]byte, closureManifest, error) {
	raw, err := store.Get(ctx, digest)
	if err != nil {
		return nil, closureManifest{}, err
	}
	var m closureManifest
	if err := json.Unmarshal(raw, &m); err != nil || m.V != 1 || !ValidDigest(m.Root) {
		return nil, closureManifest{}, fmt.Errorf("%w: %s is not a closure manifest", ErrContractInvalid, digest)
	}
	root, err := store.Get(ctx, m.Root)
	if err != nil {
		return nil, closureManifest{}, err
	}
	return root, m, nil
}

// FetchSchema resolves a closure digest to a compiled schema, verifying every artifact on the way.
func FetchSchema(ctx context.Context, store *ContractStore, digest string) (*Schema, error) {
	root, _, err := fetchClosure(ctx, store, digest)
	if err != nil {
		return nil, err
	}
	s, err := CompileSchema(root)
	if err != nil {
		return nil, err
	}
	if s.closure != digest {
		return nil, fmt.Errorf("%w: schema %s has references this store cannot close", ErrContractInvalid, digest)
	}
	return s, nil
}

// FetchCluster resolves a cluster closure digest to its verified document.
func FetchCluster(ctx context.Context, store *ContractStore, digest string) (ClusterDocument, error) {
	root, _, err := fetchClosure(ctx, store, digest)
	if err != nil {
		return ClusterDocument{}, err
	}
	var doc ClusterDocument
	if err := json.Unmarshal(root, &doc); err != nil {
		return ClusterDocument{}, fmt.Errorf("%w: cluster %s: %w", ErrContractInvalid, digest, err)
	}
	return doc, nil
}
