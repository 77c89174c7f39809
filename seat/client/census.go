package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// How long a census waits for every manager, and when it probes the silent
// ones (a crashed manager is then classified at once, not at the deadline).
const (
	censusTimeout = 5 * time.Second
	censusProbe   = time.Second
	stopTimeout   = 15 * time.Second // one graceful stop in StopEverySeat
)

// Census is one ps over the managers: every row attributed to the manager
// that runs it, and which managers gave no counted answer.
type Census struct {
	Rows     []CensusRow      `json:"rows"`     // by name, then manager
	Managers []string         `json:"managers"` // those that answered, sorted
	Missing  []ep.MissingSlot `json:"missing,omitempty"`
	// Failed are managers that answered, but with an error or with what is
	// no ps answer: their seats are not in Rows.
	Failed []FailedManager `json:"failed,omitempty"`
	// Complete is the scatter's word that every expected manager gave a
	// counted reply; a census pinned to one manager is complete.
	Complete bool `json:"-"`
}

// Incomplete reports whether some manager's seats may be absent.
func (cs *Census) Incomplete() bool { return len(cs.Missing) > 0 || len(cs.Failed) > 0 || !cs.Complete }

// FailedManager is a manager whose ps answer could not be used, and why.
type FailedManager struct {
	InstanceID string `json:"instanceId"`
	Error      string `json:"error"`
}

// CensusRow is one seat with the manager that runs it.
type CensusRow struct {
	Manager string `json:"manager"`
	Row
	ManagerNowMs int64 `json:"-"` // the manager's clock when it answered: read the row's times against it
	owned        bool  // found on the roster by an agent: addressed in owner mode
}

// Seat addresses the row's seat as its finder may: the operator by name,
// an agent (a row found on the roster) in owner mode, as its spawner.
func (r CensusRow) Seat() Seat {
	if !r.owned {
		return Seat{Name: r.Name, Manager: r.Manager}
	}
	p, _ := wire.ParsePrincipal(r.ID)
	return Seat{Name: r.Name, Manager: r.Manager, Owner: p.Owner, UID: r.LifecycleUID}
}

// Find is the seat of that name: a running one before any other, since a
// name is reused once its seat has exited.
func (cs *Census) Find(name string) (CensusRow, bool) {
	var found *CensusRow
	for i, r := range cs.Rows {
		if r.Name == name && (found == nil || r.Running()) {
			found = &cs.Rows[i]
		}
	}
	if found == nil {
		return CensusRow{}, false
	}
	return *found, true
}

// Running are the rows whose process runs.
func (cs *Census) Running() []CensusRow {
	var out []CensusRow
	for _, r := range cs.Rows {
		if r.Running() {
			out = append(out, r)
		}
	}
	return out
}

// NoSeatError is Locate's answer when no manager has a seat of the name.
type NoSeatError struct {
	Name  string
	Seats []string // the names the census did find
}

func (e *NoSeatError) Error() string {
	list := "(none)"
	if len(e.Seats) > 0 {
		list = strings.Join(e.Seats, ", ")
	}
	return fmt.Sprintf("no seat %q (seats: %s)", e.Name, list)
}

// IsNoManager reports whether err is a census's refusal because no
// manager is registered in the space (or its registry cannot be read): a
// mesh without managers, which has no seats.
func IsNoManager(err error) bool {
	e := proto.AsError(err)
	return e != nil && e.Code == proto.CodeFailedPrecondition
}

// Census asks every registered manager for its seats at once, or only the
// instance on when it is set.
func (c *Client) Census(ctx context.Context, on string) (*Census, error) {
	var res *ep.ScatterResult
	if on != "" || c.roster != nil {
		var opts []ep.CallOption
		if on != "" {
			opts = append(opts, ep.On(on))
		}
		r, err := c.ep.Call(ctx, wire.ManagerEndpoint, wire.ManagerPs, nil, opts...)
		if err != nil {
			return nil, c.restarted(err)
		}
		res = &ep.ScatterResult{Complete: true, Replies: []ep.ScatterReply{{InstanceID: r.Responder.InstanceID, Epoch: r.Responder.Epoch, Data: r.Data}}}
	} else {
		var err error
		res, err = c.ep.Scatter(ctx, wire.ManagerEndpoint, wire.ManagerPs, nil, ep.Timeout(censusTimeout), ep.ProbeAfter(censusProbe))
		if err != nil {
			return nil, err
		}
	}
	return censusOf(res), nil
}

// censusOf attributes each reply's rows to the instance whose subject it
// came on. A reply that is an error or not a ps answer adds no rows and
// names its manager in Failed.
func censusOf(res *ep.ScatterResult) *Census {
	cs := &Census{Missing: res.Missing, Complete: res.Complete}
	for _, r := range res.Replies {
		if r.Error != nil {
			cs.Failed = append(cs.Failed, FailedManager{InstanceID: r.InstanceID, Error: r.Error.Error()})
			continue
		}
		var ps PsReply
		if err := json.Unmarshal(r.Data, &ps); err != nil {
			cs.Failed = append(cs.Failed, FailedManager{InstanceID: r.InstanceID, Error: "its answer is not a ps reply: " + err.Error()})
			continue
		}
		cs.Managers = append(cs.Managers, r.InstanceID)
		for _, row := range ps.Seats {
			cs.Rows = append(cs.Rows, CensusRow{Manager: r.InstanceID, Row: row, ManagerNowMs: ps.NowMs})
		}
	}
	sort.Strings(cs.Managers)
	sort.Slice(cs.Rows, func(i, j int) bool {
		if cs.Rows[i].Name != cs.Rows[j].Name {
			return cs.Rows[i].Name < cs.Rows[j].Name
		}
		return cs.Rows[i].Manager < cs.Rows[j].Manager
	})
	return cs
}

// Locate finds the seat of that name over every manager (or only on): a
// running one first. No such seat is a *NoSeatError. An agent's client
// finds it on the roster instead (Rostered).
func (c *Client) Locate(ctx context.Context, name, on string) (CensusRow, error) {
	if c.roster != nil {
		peers, err := c.roster(ctx)
		if err != nil {
			return CensusRow{}, fmt.Errorf("reading the roster to find seat %s: %w", name, err)
		}
		return Rostered(peers, name, on)
	}
	cs, err := c.Census(ctx, on)
	if err != nil {
		return CensusRow{}, err
	}
	if r, ok := cs.Find(name); ok {
		return r, nil
	}
	names := make([]string, 0, len(cs.Rows))
	for _, r := range cs.Rows {
		names = append(names, r.Name)
	}
	return CensusRow{}, &NoSeatError{Name: name, Seats: names}
}

// Rostered is the seat of that name as the roster shows it, for an agent
// that may not take the census: the lifecycle its presence names, on the
// manager its card names (on, when set, wins), addressed in owner mode.
// Its process state is its presence's: running unless offline. No such
// seat is a *NoSeatError naming the seats the roster shows.
func Rostered(peers []presence.Peer, name, on string) (CensusRow, error) {
	var found *presence.Peer
	var seats []string
	for i, p := range peers {
		mgr := p.Record.Card.Meta[presence.MetaManager]
		if mgr == "" {
			continue // not a seat: no manager hosts it
		}
		seats = append(seats, p.Record.Card.Actor)
		if p.Record.Card.Actor == name && (found == nil || found.Offline) {
			found = &peers[i]
		}
	}
	if found == nil || found.Record.LifecycleUID == "" {
		sort.Strings(seats)
		return CensusRow{}, &NoSeatError{Name: name, Seats: seats}
	}
	mgr := on
	if mgr == "" {
		mgr = found.Record.Card.Meta[presence.MetaManager]
	}
	process := ProcessRunning
	if found.Offline {
		process = "offline"
	}
	return CensusRow{Manager: mgr, owned: true, Row: Row{
		Name: name, ID: found.ID, LifecycleUID: found.Record.LifecycleUID, Role: found.Role,
		Process: process, Mesh: string(found.Status),
	}}, nil
}

// Running are the running seats of every manager; none when no manager is
// registered.
func (c *Client) Running(ctx context.Context) ([]CensusRow, error) {
	cs, err := c.Census(ctx, "")
	if IsNoManager(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return cs.Running(), nil
}

// StopEverySeat stops every running seat of every manager, gracefully and
// in parallel, and names those it stopped, sorted; the error joins every
// seat it could not stop.
func (c *Client) StopEverySeat(ctx context.Context) ([]string, error) {
	rows, err := c.Running(ctx)
	if err != nil {
		return nil, err
	}
	var (
		mu      sync.Mutex
		stopped []string
		errs    []error
		wg      sync.WaitGroup
	)
	for _, r := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, stopTimeout)
			defer cancel()
			_, err := c.Stop(sctx, r.Seat(), true)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s on manager %s: %w", r.Name, r.Manager, err))
				return
			}
			stopped = append(stopped, r.Name)
		}()
	}
	wg.Wait()
	sort.Strings(stopped)
	return stopped, errors.Join(errs...)
}
