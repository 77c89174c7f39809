package clirender

import (
	"fmt"
	"io"
	"strings"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Mint prints what `cotal mint` did for name, as JSON or as lines; from
// is the agent file the lists came from ("" for none).
func Mint(w io.Writer, asJSON bool, name, space, from string, m host.Minted) {
	id := m.Creds.Identity
	if asJSON {
		res := map[string]any{
			"principal": id.Principal.ID(), "lifecycleUid": id.UID, "profile": id.Profile,
			"role": id.Role, "creds": m.Path, "space": space, "provisioned": m.Provisioned,
			"subscribe": NonNil(id.Subscribe), "allowSubscribe": NonNil(id.AllowSubscribe),
			"allowPublish": NonNil(id.AllowPublish), "capabilities": NonNil(id.Capabilities),
			"revoked": NonNil(m.Earlier),
		}
		if from != "" {
			res["agentFile"] = from
		}
		JSON(w, res)
		return
	}
	if from != "" {
		fmt.Fprintf(w, "from %s\n", from)
	}
	fmt.Fprintf(w, "principal     %s\n", id.Principal.ID())
	fmt.Fprintf(w, "lifecycle uid %s\n", id.UID)
	fmt.Fprintf(w, "profile       %s\n", id.Profile)
	if id.Role != "" {
		fmt.Fprintf(w, "role          %s\n", id.Role)
	}
	if id.Profile == wire.ProfileAgent {
		fmt.Fprintf(w, "read          %s\n", ListOrNone(id.AllowSubscribe))
		fmt.Fprintf(w, "post          %s\n", ListOrNone(id.AllowPublish))
		if len(id.Capabilities) > 0 {
			fmt.Fprintf(w, "capabilities  %s\n", strings.Join(id.Capabilities, ", "))
		}
	}
	fmt.Fprintf(w, "creds         %s (0600)\n", m.Path)
	if len(m.Earlier) > 0 {
		where := "on the running mesh"
		if !m.Running {
			where = "from the next `cotal up`"
		}
		fmt.Fprintf(w, "revoked       %s (earlier credentials of %s, refused %s)\n", strings.Join(m.Earlier, ", "), name, where)
	}
	if m.Provisioned {
		fmt.Fprintln(w, "inbox         ready on the running mesh")
	} else {
		fmt.Fprintln(w, "inbox         created by the next `cotal up`")
	}
}
