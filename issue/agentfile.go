package issue

import (
	"errors"
	"fmt"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// FromAgentFile takes the role and channel lists of an agent identity
// from the project's .cotal/agents/<name>.md above cwd, unless flagsSet
// (the person gave the lists). It returns the file's path ("" when none
// was used) and, for a file found but not used, why. A broken file is an
// error (*config.AgentFileError for its content): never skipped silently.
func FromAgentFile(cwd, name string, flagsSet bool, id *broker.Identity) (path, ignored string, err error) {
	path, ok := config.FindAgentFile(cwd, name)
	switch {
	case !ok:
		return "", "", nil
	case flagsSet:
		return "", path + ": ACL flags given", nil
	case id.Profile != wire.ProfileAgent:
		return "", fmt.Sprintf("%s: --profile %s takes no agent ACL", path, id.Profile), nil
	}
	a, err := config.LoadAgentFile(path)
	if err != nil {
		var fe *config.AgentFileError
		if errors.As(err, &fe) {
			return "", "", err
		}
		return "", "", fmt.Errorf("reading agent file: %w", err)
	}
	id.Role, id.Subscribe, id.AllowSubscribe, id.AllowPublish, id.Capabilities = a.Role, a.Subscribe, a.AllowSubscribe, a.AllowPublish, a.Capabilities
	return path, "", nil
}
