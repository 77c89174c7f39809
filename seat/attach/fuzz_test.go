package attach

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"
)

// A rail frame off the wire never panics the decoder, and a data frame it
// accepts re-encodes to a frame that decodes the same.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"t":"f","seq":1,"data":{"k":"data","b":"aGk="}}`,
		`{"t":"f","seq":9007199254740991,"ack":3,"data":null}`,
		`{"t":"credit","ack":0}`,
		`{"t":"close"}`,
		`{"t":"f","seq":1,"seq":2,"data":1}`,
		`{"t":"f","seq":-1,"data":1}`,
		`[1,2]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := decodeFrame(b)
		if err != nil || fr.t != frameData {
			return
		}
		if fr.seq == 0 || fr.seq > maxSafeInt || fr.ack > maxSafeInt {
			t.Fatalf("accepted seq %d ack %d", fr.seq, fr.ack)
		}
		again, err := decodeFrame(appendDataFrame(nil, fr.seq, fr.ack, fr.data))
		if err != nil || again.seq != fr.seq || again.ack != fr.ack || !bytes.Equal(again.data, fr.data) {
			t.Fatalf("re-encoded frame decodes to %+v, %v; want %+v", again, err, fr)
		}
	})
}

// A terminal payload never panics the decoder; data it accepts round-trips.
func FuzzDecodePayload(f *testing.F) {
	for _, s := range []string{
		`{"k":"data","b":"aGk="}`,
		`{"k":"data","b":"a\u0047k="}`,
		`{"k":"ready"}`,
		`{"k":"resize","cols":80,"rows":24}`,
		`{"k":"end","reason":"process-exit"}`,
		`{"k":"drop","bytes":12}`,
		`{"k":"resize","cols":1e3,"rows":24}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePayload(b)
		if err != nil {
			return
		}
		switch p.kind {
		case kindData:
			again, err := decodePayload(encodeData(p.b))
			if err != nil || !bytes.Equal(again.b, p.b) {
				t.Fatalf("data %q does not round-trip: %v", p.b, err)
			}
		case kindResize:
			if p.cols < 1 || p.rows < 1 {
				t.Fatalf("accepted size %dx%d", p.cols, p.rows)
			}
		case kindEnd:
			if !validReason(p.reason) {
				t.Fatalf("accepted reason %q", p.reason)
			}
		}
	})
}

// A presented grant never panics the parser, and one it accepts holds
// together: its subjects are the ones its fields derive.
func FuzzParseGrant(f *testing.F) {
	// Everything fixed: the fuzzing workers must agree on the seed corpus.
	s := signerOf(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	signed := Grant{
		V: GrantVersion, SessionID: strings.Repeat("s", 43), Space: "fuzz", Endpoint: "manager",
		Holder:  Holder{ID: "local.alice", LifecycleUID: strings.Repeat("u", 26)},
		Serving: Serving{InstanceID: "inst", Epoch: 1}, Window: DefaultWindow,
		IAT: 1, EXP: 1 + time.Hour.Milliseconds(), Nonce: strings.Repeat("n", 24), Issuer: Issuer{KeyID: s.KeyID()},
	}
	caller, _ := signed.Holder.Caller()
	signed.Subjects, _ = SessionSubjects("fuzz", "manager", signed.SessionID, 1, caller)
	signed, err := s.sign(signed)
	if err != nil {
		f.Fatal(err)
	}
	raw, _ := signed.Marshal()
	f.Add(raw)
	f.Add([]byte(`{"v":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGrant(b)
		if err != nil {
			return
		}
		if err := g.check(); err != nil {
			t.Fatalf("accepted a grant that fails its own check: %v", err)
		}
		// The signature covers every field: whatever bytes verify are the
		// grant that was signed.
		got, err := s.Verify(b, Expect{Space: g.Space, Endpoint: g.Endpoint, Serving: g.Serving, Now: time.UnixMilli(g.IAT)})
		if err == nil && got != signed {
			t.Fatalf("verified %+v; only %+v was signed", got, signed)
		}
	})
}
