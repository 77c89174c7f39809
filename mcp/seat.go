package mcp

import (
	"context"
	"crypto/tls"
	"fmt"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// Acting is who `cotal mcp` acts as and where it dials: what the command
// line says, completed inside a seat from the seat's own.
type Acting struct {
	Manager string // the manager whose connector holds the seat; "" outside a seat
	Creds   string
	Source  string // how Creds was named, for a refusal: "--creds", "the seat's creds"
	URL     string
	TLS     *tls.Config // how a TLS server at URL is verified (--tls-pin, --tls-ca); nil: the server decides
	Space   string
	Name    string
	UID     string
}

// InSeat completes a from the seat this process runs in, when
// COTAL_MANAGER_INSTANCE names its manager: the launch material the
// sandbox handed the seat (its creds, url, space, name and lifecycle),
// then COTAL_NAME and COTAL_LIFECYCLE_UID. What the command line set
// wins.
func (a Acting) InSeat(getenv func(string) string) Acting {
	a.Manager = getenv("COTAL_MANAGER_INSTANCE")
	if a.Manager == "" {
		return a
	}
	if m, err := sandbox.ReadMaterial(getenv(sandbox.MaterialEnv)); err == nil {
		if a.Creds == "" {
			a.Source = "the seat's creds"
		}
		a.Creds, a.URL = firstSet(a.Creds, m.Creds), firstSet(a.URL, m.URL)
		a.Space, a.Name, a.UID = firstSet(a.Space, m.Space), firstSet(a.Name, m.Name), m.LifecycleUID
	}
	a.Name, a.UID = firstSet(a.Name, getenv("COTAL_NAME")), firstSet(a.UID, getenv("COTAL_LIFECYCLE_UID"))
	return a
}

// Self is the identity a server with a creds file acts as: the file's
// principal, in the file's space or else a's.
func (a Acting) Self(info wire.CredsInfo) Identity {
	return Identity{ID: info.Principal.ID(), Name: info.Principal.Actor, Role: info.Role, Space: firstSet(info.Space, a.Space)}
}

// Target is the mesh a server with no URL dials: where it listens, how
// its TLS server is verified, its space, and whether it runs open
// (without credentials).
type Target struct {
	URL, Space string
	TLS        *tls.Config
	Open       bool
}

// Dialer is how a server acting as a connects: inside a seat one-shot and
// holding no channel (the seat's connector holds them), else as its
// creds or, with none, as its name on an open mesh; with no URL, resolve
// finds the mesh at each dial.
func (a Acting) Dialer(resolve func() (Target, error), logf func(string, ...any)) func(context.Context) (*mesh.Endpoint, error) {
	return func(ctx context.Context) (*mesh.Endpoint, error) {
		o := mesh.Options{Creds: a.Creds, URL: a.URL, TLS: a.TLS, Space: a.Space, OneShot: a.Manager != "", Logf: logf}
		if a.Manager != "" {
			o.Subscribe = []string{}
		}
		if a.Creds == "" {
			o.Name, o.LifecycleUID = a.Name, a.UID
		}
		if a.URL == "" {
			t, err := resolve()
			if err != nil {
				return nil, err
			}
			if a.Creds == "" && !t.Open {
				return nil, fmt.Errorf("mesh %s needs a credential: pass --creds (mint one with `cotal mint %s`)", t.Space, a.Name)
			}
			o.URL, o.TLS, o.Space = t.URL, t.TLS, t.Space
		}
		return mesh.Connect(ctx, o)
	}
}

func firstSet(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
