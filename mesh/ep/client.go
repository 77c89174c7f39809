package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/violation"
	"github.com/cotal-go/cotal/mesh/wire"
)

// DefaultCallTimeout is the deadline of a call whose context has none (spec §4: 15 s).
const DefaultCallTimeout = 15 * time.Second

// MaxReissues bounds the automatic re-issues of an unpinned call refused not-executed by a stale bind.
const MaxReissues = 16

// ErrNoCommand is returned (as a not-executed not-found *Error) when a described endpoint has no such command.
var ErrNoCommand = errors.New("no such command")

// ClientOptions say who a Client calls as.
type ClientOptions struct {
	Space  string
	Caller proto.Caller // the forge-locked triple; with a credential it must be the credential's own
	From   proto.From   // default {ID: caller, Name: actor}
	Logf   func(format string, args ...any)
	// SharedConn leaves the connection's error handler alone: set it for a
	// connection the client does not own (in-process, trusted, shared by
	// many clients), where no permission violation can occur and chaining
	// one handler per client would grow without end.
	SharedConn bool
}

// Responder is the incarnation that answered, as the reply subject names it.
type Responder struct {
	InstanceID string `json:"instanceId"`
	Epoch      uint64 `json:"epoch"`
}

// DescribedCommand is one command with its verified, compiled schemas.
type DescribedCommand struct {
	proto.CommandInfo
	Input, Output *proto.Schema
}

// Described is a verified describe answer: the responder to bind to and every visible command's contract.
type Described struct {
	Endpoint  string
	Responder Responder
	Answer    proto.DescribeAnswer
	Commands  []DescribedCommand // in descriptor order
}

// Command finds a described command.
func (d *Described) Command(name string) (DescribedCommand, bool) {
	for _, c := range d.Commands {
		if c.Name == name {
			return c, true
		}
	}
	return DescribedCommand{}, false
}

// Client calls endpoints as one caller. Safe for concurrent use; mu guards the caches.
type Client struct {
	nc     *nats.Conn
	opts   ClientOptions
	store  *ContractStore
	perms  *violation.Tracker
	js     jetstream.JetStream
	mu     sync.Mutex
	cache  map[string]*Described // endpoint + "|" + pinned instance
	kv     jetstream.KeyValue
	schema map[string]*proto.Schema
	// replies routes this caller's replies on nc by nonce (repliesFor).
	replies *replies
}

// NewClient wraps nc; it chains its own permission-violation handler in front of the connection's.
func NewClient(nc *nats.Conn, opts ClientOptions) (*Client, error) {
	if err := wire.ValidSpace(opts.Space); err != nil {
		return nil, err
	}
	if err := opts.Caller.Valid(); err != nil {
		return nil, fmt.Errorf("ep: caller: %w", err)
	}
	if opts.From.ID == "" {
		opts.From = proto.From{ID: opts.Caller.ID(), Name: opts.Caller.Actor}
	}
	store, err := NewContractStore(nc, opts.Space)
	if err != nil {
		return nil, err
	}
	js, _ := jetstream.New(nc)
	c := &Client{nc: nc, opts: opts, store: store, perms: violation.New(), js: js, cache: map[string]*Described{}, schema: map[string]*proto.Schema{},
		replies: repliesFor(nc, opts.Space, opts.Caller)}
	if opts.SharedConn {
		return c, nil
	}
	prev := nc.ErrorHandler()
	nc.SetErrorHandler(func(conn *nats.Conn, sub *nats.Subscription, err error) {
		c.perms.Record(err)
		if prev != nil {
			prev(conn, sub, err)
		}
	})
	return c, nil
}

// Caller is who the client calls as.
func (c *Client) Caller() proto.Caller { return c.opts.Caller }

// Space is the space the client calls in.
func (c *Client) Space() string { return c.opts.Space }

// Conn is the connection the client calls over; the client does not own it.
func (c *Client) Conn() *nats.Conn { return c.nc }

// Contracts is the contract store the client verifies against.
func (c *Client) Contracts() *ContractStore { return c.store }

func (c *Client) records(ctx context.Context) (jetstream.KeyValue, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kv != nil {
		return c.kv, nil
	}
	kv, err := c.js.KeyValue(ctx, wire.RecordsBucket(c.opts.Space))
	if err != nil {
		return nil, fmt.Errorf("ep: opening the records bucket: %w", err)
	}
	c.kv = kv
	return kv, nil
}

// withDeadline gives ctx a deadline when it has none: d, else DefaultCallTimeout. The deadline is mandatory on the wire.
func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultCallTimeout)
}

func deadlineMs(ctx context.Context) int64 {
	dl, _ := ctx.Deadline()
	ms := time.Until(dl).Milliseconds()
	if ms < 1 {
		ms = 1
	}
	return ms
}

// Describe asks an endpoint what it serves, on the one rail or pinned to instance on, and verifies every contract it names against the store. Unpinned, a describe that finds no responder is republished within the deadline (the startup race).
func (c *Client) Describe(ctx context.Context, endpoint, on string) (*Described, error) {
	ctx, cancel := withDeadline(ctx, 0)
	defer cancel()
	req := proto.Request{Space: c.opts.Space, Rail: proto.RailOne, Endpoint: endpoint, Command: proto.CommandDescribe}
	if on != "" {
		req.Rail, req.InstanceID = proto.RailInst, on
	}
	backoff := 25 * time.Millisecond
	for {
		body := proto.EndpointRequest{V: proto.Version, ID: wire.NewID(), Op: proto.Op{Endpoint: proto.EndpointName(mustTok(endpoint)), Command: proto.CommandDescribe},
			Class: proto.ClassEphemeral, ReplyExpected: true, From: c.opts.From, DeadlineMs: deadlineMs(ctx)}
		resp, reply, e := c.roundTrip(ctx, req, body)
		if e == nil && !reply.OK {
			e = reply.Error
		}
		if e != nil {
			if on == "" && e.Code == proto.CodeUnavailable && e.EffectiveOutcome() == proto.NotExecuted {
				select {
				case <-ctx.Done():
					return nil, e
				case <-time.After(backoff):
					backoff = min(backoff*2, 500*time.Millisecond)
					continue
				}
			}
			return nil, e
		}
		var ans proto.DescribeAnswer
		if err := json.Unmarshal(reply.Data, &ans); err != nil {
			return nil, fmt.Errorf("ep: describe answer of %s: %w", endpoint, err)
		}
		if err := c.store.Remember(ans.Artifacts); err != nil {
			return nil, fmt.Errorf("ep: describe answer of %s: %w", endpoint, err)
		}
		d, err := c.verify(ctx, endpoint, resp, ans)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.cache[endpoint+"|"+on] = d
		c.mu.Unlock()
		return d, nil
	}
}

func mustTok(endpoint string) string {
	tok, err := proto.EndpointToken(endpoint)
	if err != nil {
		return endpoint
	}
	return tok
}

// verify fetches each cluster and each visible command's schemas from the store, checking every digest.
func (c *Client) verify(ctx context.Context, endpoint string, resp Responder, ans proto.DescribeAnswer) (*Described, error) {
	d := &Described{Endpoint: endpoint, Responder: resp, Answer: ans}
	for _, ref := range ans.Descriptor.Clusters {
		doc, err := FetchCluster(ctx, c.store, ref.Digest)
		if err != nil {
			return nil, fmt.Errorf("ep: cluster %s of %s: %w", ref.Digest, endpoint, err)
		}
		if ref.Document != nil {
			a, _ := proto.Marshal(doc)
			b, _ := proto.Marshal(*ref.Document)
			if string(a) != string(b) {
				return nil, fmt.Errorf("ep: %w: the describe answer's cluster document differs from %s", ErrContractCorrupt, ref.Digest)
			}
		}
		for _, name := range ref.Commands {
			info, ok := doc.Command(name)
			if !ok {
				return nil, fmt.Errorf("ep: %w: cluster %s has no command %s", proto.ErrContractInvalid, ref.Digest, name)
			}
			in, err := c.fetchSchema(ctx, info.InputDigest)
			if err != nil {
				return nil, fmt.Errorf("ep: %s input schema: %w", name, err)
			}
			out, err := c.fetchSchema(ctx, info.OutputDigest)
			if err != nil {
				return nil, fmt.Errorf("ep: %s output schema: %w", name, err)
			}
			d.Commands = append(d.Commands, DescribedCommand{CommandInfo: info, Input: in, Output: out})
		}
	}
	return d, nil
}

// fetchSchema resolves a closure digest once per client; the store read verifies it.
func (c *Client) fetchSchema(ctx context.Context, digest string) (*proto.Schema, error) {
	c.mu.Lock()
	s := c.schema[digest]
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := FetchSchema(ctx, c.store, digest)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.schema[digest] = s
	c.mu.Unlock()
	return s, nil
}

// Forget drops what the client knows of an endpoint's instances, so the
// next call describes them again: a caller told that an instance
// restarted (a pinned call refused as expired) is never re-issued, but its
// next call must not be bound to the old epoch again.
func (c *Client) Forget(endpoint string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.cache {
		if strings.HasPrefix(k, endpoint+"|") {
			delete(c.cache, k)
		}
	}
}

func (c *Client) described(ctx context.Context, endpoint, on string, fresh bool) (*Described, error) {
	if !fresh {
		c.mu.Lock()
		d := c.cache[endpoint+"|"+on]
		c.mu.Unlock()
		if d != nil {
			return d, nil
		}
	}
	return c.Describe(ctx, endpoint, on)
}
