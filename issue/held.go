package issue

import (
	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

// Unrevoked lists the identities the space holds unrevoked credentials
// of, oldest first: the rights the broker accepts now.
func Unrevoked(p config.Paths) ([]broker.Identity, error) {
	recs, err := liveMinted(p, func(mintedRecord) bool { return true })
	out := make([]broker.Identity, 0, len(recs))
	for _, f := range recs {
		out = append(out, f.rec.Identity)
	}
	return out, err
}
