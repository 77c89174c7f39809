package mcp

import "github.com/cotal-go/cotal/seat/sandbox"

// Acting is who `cotal mcp` acts as and where it dials: what the command
// line says, completed inside a seat from the seat's own.
type Acting struct {
	Manager string // the manager whose connector holds the seat; "" outside a seat
	Creds   string
	Source  string // how Creds was named, for a refusal: "--creds", "the seat's creds"
	URL     string
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

func firstSet(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
