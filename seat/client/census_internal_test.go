package client

import (
	"encoding/json"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// A manager that answers ps with an error, or with what is no ps reply,
// is named in Failed and makes the census incomplete; it was dropped
// without a word, so ps looked complete with its seats missing.
func TestCensusNamesAManagerThatAnsweredWithAnError(t *testing.T) {
	good, _ := json.Marshal(PsReply{Seats: []Row{{Name: "amy"}}, NowMs: 1})
	res := &ep.ScatterResult{Complete: true, Replies: []ep.ScatterReply{
		{InstanceID: "good", Data: good},
		{InstanceID: "erring", Error: &proto.Error{Code: proto.CodeInternal, Message: "ps failed"}},
		{InstanceID: "garbled", Data: json.RawMessage(`[1,2]`)},
	}}
	cs := censusOf(res)
	if len(cs.Rows) != 1 || cs.Rows[0].Name != "amy" || len(cs.Managers) != 1 || cs.Managers[0] != "good" {
		t.Fatalf("rows %+v managers %v, want amy of the good manager", cs.Rows, cs.Managers)
	}
	if len(cs.Failed) != 2 || cs.Failed[0].InstanceID != "erring" || cs.Failed[0].Error != "internal: ps failed" || cs.Failed[1].InstanceID != "garbled" {
		t.Fatalf("failed %+v, want erring (internal: ps failed) and garbled", cs.Failed)
	}
	if !cs.Incomplete() {
		t.Fatal("a census missing two managers' seats says it is complete")
	}
}
