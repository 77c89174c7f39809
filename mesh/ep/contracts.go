package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrContractCorrupt is returned when a stored artifact does not hash to the digest it is stored under; it is never used.
var ErrContractCorrupt = errors.New("contract artifact does not match its digest")

// ContractStore is the space's create-only artifact store on EPC_: one message per epc.<hex>, verified on every read. It also keeps, in memory, every artifact it stored or was handed with a describe answer: a caller without stream rights (an agent) verifies contracts from those alone. mu guards mem.
type ContractStore struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	space string

	logf func(format string, args ...any) // the server's log; nil discards

	mu  sync.Mutex
	mem map[string][]byte // digest -> canonical bytes, verified
}

// storedFacts is every artifact a store of this process wrote or found
// stored, by server, space and digest: Put sends none of them again (the
// stream denies deletes and purges, so what was stored stays). A mesh's
// manager, delivery endpoint and each seat's endpoint share most schemas,
// and each send is a write the server fsyncs (or a refused one and a read).
var storedFacts sync.Map

func (c *ContractStore) storedKey(digest string) string {
	return c.nc.ConnectedServerId() + "/" + c.space + "/" + digest
}

// NewContractStore opens the store of space over nc.
func NewContractStore(nc *nats.Conn, space string) (*ContractStore, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return &ContractStore{nc: nc, js: js, space: space, mem: map[string][]byte{}}, nil
}

// Remember adds artifacts handed over with a describe answer, each verified against the digest it is given under; a mismatch is refused whole.
func (c *ContractStore) Remember(artifacts map[string]json.RawMessage) error {
	checked := make(map[string][]byte, len(artifacts))
	for d, raw := range artifacts {
		canon, err := proto.Canonical(raw)
		if err != nil || proto.RawDigest(canon) != normDigest(d) {
			return fmt.Errorf("%w: the artifact given for %s does not hash to it", ErrContractCorrupt, d)
		}
		checked[normDigest(d)] = canon
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.Copy(c.mem, checked)
	return nil
}

// Artifacts is every artifact this store has verified or stored, by digest, for a describe answer to carry.
func (c *ContractStore) Artifacts() map[string]json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]json.RawMessage, len(c.mem))
	for d, b := range c.mem {
		out[d] = json.RawMessage(b)
	}
	return out
}

func (c *ContractStore) remembered(digest string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.mem[normDigest(digest)]
	return b, ok
}

func (c *ContractStore) keep(digest string, canon []byte) {
	c.mu.Lock()
	c.mem[digest] = canon
	c.mu.Unlock()
}

func (c *ContractStore) log(format string, args ...any) {
	if c.logf != nil {
		c.logf(format, args...)
	}
}

// Put stores a JSON document create-only under its digest and returns the digest. Storing what is already there is a no-op; a stored copy is verified, so a corrupt incumbent is never trusted: when the subject holds no message that hashes to it, the document is stored again after what is there (the stream denies deletes, so a foreign message can only be outlived, never removed).
func (c *ContractStore) Put(ctx context.Context, doc []byte) (string, error) {
	canon, err := proto.Canonical(doc)
	if err != nil {
		return "", fmt.Errorf("%w: %w", proto.ErrContractInvalid, err)
	}
	d := proto.RawDigest(canon)
	subj, err := proto.ContractSubject(c.space, d)
	if err != nil {
		return "", err
	}
	key := c.storedKey(d)
	if _, done := storedFacts.Load(key); done {
		c.keep(d, canon)
		return d, nil
	}
	if _, err := writeFact(ctx, c.js, c.nc, wire.EPCStream(c.space), subj, canon, hashesTo(d), c.logf); err != nil && !errors.Is(err, ErrExists) {
		return "", err
	}
	c.keep(d, canon)
	if !strings.HasPrefix(key, "/") { // a server id, so the key names one server
		storedFacts.Store(key, struct{}{})
	}
	return d, nil
}

// Get fetches the artifact stored under digest and verifies that its RFC 8785 form hashes to it; one already verified in memory is not fetched again.
func (c *ContractStore) Get(ctx context.Context, digest string) ([]byte, error) {
	if b, ok := c.remembered(digest); ok {
		return b, nil
	}
	subj, err := proto.ContractSubject(c.space, digest)
	if err != nil {
		return nil, err
	}
	want := normDigest(digest)
	r, err := validOnSubject(ctx, c.nc, wire.EPCStream(c.space), subj, hashesTo(want))
	if r.skipped > 0 {
		c.log("contract store: epc.%s holds %d message(s) that do not hash to it; they are skipped", digest, r.skipped)
	}
	if err != nil {
		if r.skipped > 0 && errors.Is(err, ErrNoMessage) {
			return nil, fmt.Errorf("%w: epc.%s holds %d document(s), none hashing to it", ErrContractCorrupt, digest, r.skipped)
		}
		return nil, err
	}
	canon, _ := proto.Canonical(r.data)
	c.keep(want, canon)
	return r.data, nil
}

// hashesTo accepts a document whose canonical form hashes to digest.
func hashesTo(digest string) func([]byte) bool {
	return func(b []byte) bool {
		got, err := proto.Digest(b)
		return err == nil && got == digest
	}
}

func normDigest(d string) string {
	h, err := proto.DigestHex(d)
	if err != nil {
		return d
	}
	return proto.DigestPrefix + h
}

// publishSchema stores a schema's document and its closure manifest; it returns nothing new, the digests are the schema's own.
func publishSchema(ctx context.Context, store *ContractStore, s *proto.Schema) error {
	if _, err := store.Put(ctx, s.Document()); err != nil {
		return err
	}
	m, err := proto.Marshal(proto.ClosureManifest{V: 1, Root: s.ArtifactDigest(), Members: []string{}})
	if err != nil {
		return err
	}
	d, err := store.Put(ctx, m)
	if err != nil {
		return err
	}
	if d != s.Digest() {
		return fmt.Errorf("ep: closure manifest of %s stored as %s, want %s", s.ArtifactDigest(), d, s.Digest())
	}
	return nil
}

// publishSchemas stores each distinct schema of schemas (by digest) with
// its closure manifest, side by side: every write is a synced store
// write and a round trip, and an endpoint with two dozen commands would
// otherwise wait for them one after the other at every start. Nothing
// names these digests yet (the cluster document and the registration
// come after), so the order among them does not matter.
func publishSchemas(ctx context.Context, store *ContractStore, schemas []*proto.Schema) error {
	seen := map[string]bool{}
	var distinct []*proto.Schema
	for _, sc := range schemas {
		if !seen[sc.Digest()] {
			seen[sc.Digest()] = true
			distinct = append(distinct, sc)
		}
	}
	errs := make([]error, len(distinct))
	var wg sync.WaitGroup
	gate := make(chan struct{}, 16)
	for i, sc := range distinct {
		wg.Add(1)
		gate <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-gate }()
			if err := publishSchema(ctx, store, sc); err != nil {
				errs[i] = fmt.Errorf("ep: publishing schema %s: %w", sc.Digest(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// publishCluster stores a cluster document, then its closure manifest over every schema it reaches, and returns the closure digest.
func publishCluster(ctx context.Context, store *ContractStore, doc proto.ClusterDocument, schemas []*proto.Schema) (string, error) {
	raw, err := proto.Marshal(doc)
	if err != nil {
		return "", err
	}
	root, err := store.Put(ctx, raw)
	if err != nil {
		return "", err
	}
	var members []string
	for _, s := range schemas {
		members = append(members, s.Digest(), s.ArtifactDigest())
	}
	slices.Sort(members)
	members = slices.Compact(members)
	if members == nil {
		members = []string{}
	}
	m, err := proto.Marshal(proto.ClosureManifest{V: 1, Root: root, Members: members})
	if err != nil {
		return "", err
	}
	return store.Put(ctx, m)
}

// fetchClosure reads and verifies a closure manifest and its root document.
func fetchClosure(ctx context.Context, store *ContractStore, digest string) ([]byte, proto.ClosureManifest, error) {
	raw, err := store.Get(ctx, digest)
	if err != nil {
		return nil, proto.ClosureManifest{}, err
	}
	var m proto.ClosureManifest
	if err := json.Unmarshal(raw, &m); err != nil || m.V != 1 || !proto.ValidDigest(m.Root) {
		return nil, proto.ClosureManifest{}, fmt.Errorf("%w: %s is not a closure manifest", proto.ErrContractInvalid, digest)
	}
	root, err := store.Get(ctx, m.Root)
	if err != nil {
		return nil, proto.ClosureManifest{}, err
	}
	return root, m, nil
}

// FetchSchema resolves a closure digest to a compiled schema, verifying every artifact on the way.
func FetchSchema(ctx context.Context, store *ContractStore, digest string) (*proto.Schema, error) {
	root, _, err := fetchClosure(ctx, store, digest)
	if err != nil {
		return nil, err
	}
	s, err := proto.CompileSchema(root)
	if err != nil {
		return nil, err
	}
	if s.Digest() != digest {
		return nil, fmt.Errorf("%w: schema %s has references this store cannot close", proto.ErrContractInvalid, digest)
	}
	return s, nil
}

// FetchCluster resolves a cluster closure digest to its verified document.
func FetchCluster(ctx context.Context, store *ContractStore, digest string) (proto.ClusterDocument, error) {
	root, _, err := fetchClosure(ctx, store, digest)
	if err != nil {
		return proto.ClusterDocument{}, err
	}
	var doc proto.ClusterDocument
	if err := json.Unmarshal(root, &doc); err != nil {
		return proto.ClusterDocument{}, fmt.Errorf("%w: cluster %s: %w", proto.ErrContractInvalid, digest, err)
	}
	return doc, nil
}
