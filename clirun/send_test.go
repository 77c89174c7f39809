package clirun

import (
	"testing"

	"github.com/cotal-go/cotal/mesh"
)

// TestSendErrorOfAnUnconfirmedSendSaysHowToRetry: a send the mesh did not
// acknowledge says it may be stored, its id, and that a send again with
// --id stores it once.
func TestSendErrorOfAnUnconfirmedSendSaysHowToRetry(t *testing.T) {
	err := SendError(&mesh.NotConfirmedError{ID: "abc-1", What: "post to #team", Why: "the mesh stopped before acknowledging"})
	want := "post to #team not confirmed: the mesh stopped before acknowledging; it may be stored, id abc-1; send it again with --id abc-1 and the mesh stores it once"
	if err == nil || err.Error() != want {
		t.Fatalf("SendError: %v\nwant %s", err, want)
	}
}
