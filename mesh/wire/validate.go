package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Validate is the publisher-side schema check, so a peer never receives an envelope it would have to guess about; each error names the field.
func (m Message) Validate() error {
	if m.ID == "" {
		return refuse(ErrInvalidMessage, "id: must not be empty")
	}
	if m.TS <= 0 {
		return refuse(ErrInvalidMessage, "ts: %d is not an epoch time in milliseconds", m.TS)
	}
	if err := ValidSpace(m.Space); err != nil {
		return refuse(ErrInvalidMessage, "space: %v", err)
	}
	if _, err := ParsePrincipal(m.From.ID); err != nil {
		return refuse(ErrInvalidMessage, "from.id: %v", err)
	}
	if err := m.validateRouting(); err != nil {
		return err
	}
	if len(m.Parts) == 0 {
		return refuse(ErrInvalidMessage, "parts: at least one part is required")
	}
	for i, p := range m.Parts {
		if err := p.validate(); err != nil {
			return refuse(ErrInvalidMessage, "parts[%d].%v", i, err)
		}
	}
	return nil
}

// validateRouting enforces exactly one of channel, to and toService, each well-formed.
func (m Message) validateRouting() error {
	set := 0
	for _, v := range []string{m.Channel, m.To, m.ToService} {
		if v != "" {
			set++
		}
	}
	if set != 1 {
		return refuse(ErrInvalidMessage, "channel/to/toService: exactly one must be set, found %d", set)
	}
	switch {
	case m.Channel != "":
		if err := ValidateConcreteChannel(m.Channel); err != nil {
			return refuse(ErrInvalidMessage, "channel: %v", err)
		}
	case m.To != "":
		if _, err := ParsePrincipal(m.To); err != nil {
			return refuse(ErrInvalidMessage, "to: %v", err)
		}
	case strings.TrimSpace(m.ToService) == "":
		return refuse(ErrInvalidMessage, "toService: must name a role")
	}
	return nil
}

// validate checks one part against the schema branch its kind selects.
func (p Part) validate() error {
	switch p.Kind {
	case PartText:
		return nil
	case PartData:
		if len(p.Data) == 0 {
			return errors.New("data: must be present")
		}
		if !json.Valid(p.Data) {
			return errors.New("data: must be valid JSON")
		}
	case PartArtifact:
		switch {
		case p.Name == "":
			return errors.New("name: an artifact needs a name")
		case p.MediaType == "":
			return errors.New("mediaType: an artifact needs a media type")
		case !validDigest(p.Digest):
			return errors.New("digest: must be sha256: followed by 64 lowercase hex characters")
		case p.Size == nil:
			return errors.New("size: an artifact needs a size")
		case *p.Size < 0:
			return errors.New("size: must not be negative")
		}
	case "":
		return errors.New("kind: must be set")
	default:
		if !validExtensionKind(p.Kind) {
			return fmt.Errorf("kind: %q is neither text, data, artifact nor a reverse-DNS extension kind", p.Kind)
		}
	}
	return nil
}

// validDigest matches sha256:<64 lowercase hex>.
func validDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	return ok && len(hexPart) == 64 && AllBytes(hexPart, func(c byte) bool {
		return '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
	})
}

// validExtensionKind matches ^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$.
func validExtensionKind(k string) bool {
	segs := strings.Split(k, ".")
	if len(segs) < 2 {
		return false
	}
	for _, s := range segs {
		if !AllBytes(s, func(c byte) bool {
			return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-'
		}) {
			return false
		}
	}
	return true
}
