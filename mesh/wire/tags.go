package wire

import (
	"encoding/base32"
	"encoding/json"
	"strings"
)

// Credential tags carry what a client must know about its own identity
// inside the user JWT, so a process holding only its creds file needs no
// extra flag. The broker lowercases JWT tags, so every value is lowercase
// or lowercase base32.
const (
	TagUID       = "cotal-uid:"
	TagProfile   = "cotal-profile:"
	TagRole      = "cotal-role:"
	TagSubscribe = "cotal-subscribe:" // base32 JSON list: channel names are case-sensitive
	TagAllowSub  = "cotal-allowsub:"
	TagAllowPub  = "cotal-allowpub:"
	TagSpace     = "cotal-space:" // base32 JSON list of one: space names are case-sensitive
)

var tagEnc = base32.StdEncoding.WithPadding(base32.NoPadding)

// EncodeListTag packs a channel list into a tag value that survives lowercasing.
func EncodeListTag(prefix string, list []string) string {
	if list == nil {
		list = []string{}
	}
	b, _ := json.Marshal(list)
	return prefix + strings.ToLower(tagEnc.EncodeToString(b))
}

// CredTags is what DecodeCredTags recovers from a credential's tags.
type CredTags struct {
	Space          string
	UID            string
	Profile        Profile
	Role           string
	Subscribe      []string
	AllowSubscribe []string
	AllowPublish   []string
	HasLists       bool // the list tags were present
}

// DecodeCredTags reads the cotal tags out of a JWT tag list; unknown tags
// are ignored and a damaged list tag reads as empty.
func DecodeCredTags(tags []string) CredTags {
	var c CredTags
	for _, t := range tags {
		switch {
		case strings.HasPrefix(t, TagUID):
			c.UID = strings.TrimPrefix(t, TagUID)
		case strings.HasPrefix(t, TagProfile):
			c.Profile = Profile(strings.TrimPrefix(t, TagProfile))
		case strings.HasPrefix(t, TagRole):
			c.Role = strings.TrimPrefix(t, TagRole)
		case strings.HasPrefix(t, TagSubscribe):
			c.Subscribe, c.HasLists = decodeList(strings.TrimPrefix(t, TagSubscribe)), true
		case strings.HasPrefix(t, TagAllowSub):
			c.AllowSubscribe = decodeList(strings.TrimPrefix(t, TagAllowSub))
		case strings.HasPrefix(t, TagSpace):
			if l := decodeList(strings.TrimPrefix(t, TagSpace)); len(l) == 1 {
				c.Space = l[0]
			}
		case strings.HasPrefix(t, TagAllowPub):
			c.AllowPublish = decodeList(strings.TrimPrefix(t, TagAllowPub))
		}
	}
	return c
}

func decodeList(v string) []string {
	b, err := tagEnc.DecodeString(strings.ToUpper(v))
	if err != nil {
		return nil
	}
	var out []string
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}
