package e2e

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testutil"
)

// listenAddress is the --host a test of a mesh reachable from other
// machines binds: this machine's own non-loopback address, where another
// machine would dial it, else every interface (dialled on 127.0.0.1,
// which the generated certificate names).
func listenAddress() string {
	if ip := testutil.ReachableIP(); ip != "127.0.0.1" {
		return ip
	}
	return "0.0.0.0"
}

// TestMeshReachableFromAnotherMachine starts a mesh with up --host and
// reaches it as another machine would: a cotal home of its own with only
// two minted creds files copied over, the URL and the pin up printed. A
// DM goes from one to the other; a wrong pin, no pin and plain NATS are
// refused before any credential is sent, saying why; a seat the manager
// starts still sends; status says the mesh listens beyond loopback and
// its pin; --open with that host is refused.
func TestMeshReachableFromAnotherMachine(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), project(t, shellPersona)
	host := listenAddress()

	if _, stderr, code := runIn(t, home, dir, "up", "--open", "--host", host); code != 2 || !strings.Contains(stderr, "--open with --host "+host+" refused") {
		t.Fatalf("up --open --host %s: exit %d %q; want 2, refused naming the host", host, code, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "up", "--host", host, "--tls-cert", "c.pem"); code != 2 || !strings.Contains(stderr, "--tls-key") {
		t.Fatalf("up --tls-cert without --tls-key: exit %d %q; want 2 naming --tls-key", code, stderr)
	}

	out, stderr, code := runIn(t, home, dir, "up", "--detach", "--json", "--host", host)
	if code != 0 {
		t.Fatalf("up --detach --host %s: exit %d\n%s%s", host, code, out, stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	var up struct {
		URL        string   `json:"url"`
		Host       string   `json:"host"`
		RemoteURLs []string `json:"remoteUrls"`
		TLSPin     string   `json:"tlsPin"`
	}
	if err := json.Unmarshal([]byte(out), &up); err != nil {
		t.Fatalf("up --json: %v\n%s", err, out)
	}
	if up.Host != host || len(up.RemoteURLs) == 0 || !strings.HasPrefix(up.RemoteURLs[0], "tls://") || len(up.TLSPin) != 64 {
		t.Fatalf("up --json %+v: want host %s, a tls:// URL to dial from elsewhere and a SHA-256 pin", up, host)
	}
	rec, err := config.ReadBrokerRecord(config.Paths{Space: "seats", StoreDir: storeOf(t, home, "seats")})
	if err != nil || rec.TLSPin != up.TLSPin || rec.Host != host {
		t.Fatalf("broker.json %+v (%v): want the pin %s and host %s", rec, err, up.TLSPin, host)
	}
	// Asked again, up says the mesh runs, with what another machine needs.
	out, stderr, code = runIn(t, home, dir, "up", "--detach", "--json")
	var again struct {
		AlreadyRunning bool     `json:"alreadyRunning"`
		RemoteURLs     []string `json:"remoteUrls"`
		TLSPin         string   `json:"tlsPin"`
	}
	if err := json.Unmarshal([]byte(out), &again); code != 0 || err != nil || !again.AlreadyRunning || again.TLSPin != up.TLSPin || len(again.RemoteURLs) == 0 {
		t.Fatalf("up --detach --json on the running mesh: exit %d %v\n%s%s\nwant it running, with the pin %s and the URLs to dial", code, err, out, stderr, up.TLSPin)
	}
	if out, _, _ = runIn(t, home, dir, "up", "--detach"); !strings.Contains(out, "tls pin "+up.TLSPin) {
		t.Fatalf("up --detach on the running mesh: %q, want the pin", out)
	}
	remote := up.RemoteURLs[0]
	if host == "0.0.0.0" { // every interface, and this machine has no other: dial loopback
		remote = up.URL
	}

	// The other machine: its own cotal home, the two creds files copied
	// there, nothing else of this one.
	other, away := t.TempDir(), t.TempDir()
	carry := func(name string) string {
		m := mintIn(t, home, dir, name)
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(away, name+".creds")
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return to
	}
	alice, bob := carry("alice"), carry("bob")
	as := func(creds, pin string, args ...string) (string, string, int) {
		flags := []string{"--server", remote, "--creds", creds}
		if pin != "" {
			flags = append(flags, "--tls-pin", pin)
		}
		return runCotal(t, other, append(flags, args...)...)
	}
	if out, stderr, code := as(alice, up.TLSPin, "send", "dm", "bob", "over tls from elsewhere"); code != 0 {
		t.Fatalf("send dm with the pin: exit %d\n%s%s", code, out, stderr)
	}
	inboxOf := func(want string) {
		t.Helper()
		var got []string
		waitFor(t, 15*time.Second, func() error {
			out, stderr, code := as(bob, strings.ToUpper(up.TLSPin), "inbox", "--json") // a pin as pasted, upper case
			if code != 0 {
				return fmt.Errorf("inbox: exit %d %s", code, stderr)
			}
			for _, it := range parseInbox(t, out) {
				got = append(got, it.text())
			}
			if len(got) == 0 {
				return fmt.Errorf("nothing for bob yet")
			}
			return nil
		})
		if strings.Join(got, "|") != want {
			t.Fatalf("bob's inbox %q; want %q once", got, want)
		}
	}
	inboxOf("over tls from elsewhere")

	wrong := strings.Repeat("ab", 32)
	_, stderr, code = as(alice, wrong, "send", "dm", "bob", "to an impostor")
	if code != 1 || !strings.Contains(stderr, "does not match the pin "+wrong) || !strings.Contains(stderr, up.TLSPin) || !strings.Contains(stderr, "not even the credential") {
		t.Fatalf("send with a wrong pin: exit %d %q; want 1 saying the fingerprint %s did not match and nothing was sent", code, stderr, up.TLSPin)
	}
	// An impostor elsewhere, showing a certificate of its own: the client
	// holding the real pin sends it nothing, not even its credential.
	addr, sent := impostor(t)
	_, stderr, code = runCotal(t, other, "--server", "tls://"+addr, "--creds", alice, "--tls-pin", up.TLSPin, "send", "dm", "bob", "to an impostor")
	if code != 1 || !strings.Contains(stderr, "does not match the pin "+up.TLSPin) {
		t.Fatalf("send to an impostor: exit %d %q; want 1 saying its fingerprint does not match", code, stderr)
	}
	if got := <-sent; strings.Contains(got, "CONNECT") || strings.Contains(got, credsJWT(t, alice)) {
		t.Fatalf("the impostor got %q from a client pinning another certificate", got)
	}
	if _, stderr, code := as(alice, "", "send", "dm", "bob", "unverified"); code != 1 || !strings.Contains(stderr, "certificate") {
		t.Fatalf("send with no pin to a self-signed certificate: exit %d %q; want 1 naming the certificate", code, stderr)
	}
	plain := "nats://" + strings.TrimPrefix(remote, "tls://")
	if _, stderr, code := runCotal(t, other, "--server", plain, "--creds", alice, "send", "dm", "bob", "in the clear"); code != 1 {
		t.Fatalf("send over plain NATS: exit %d %q; want 1", code, stderr)
	}
	if _, stderr, code := as(alice, "nope", "send", "dm", "bob", "x"); code != 2 || !strings.Contains(stderr, "not a SHA-256 fingerprint") {
		t.Fatalf("send with a malformed pin: exit %d %q; want 2", code, stderr)
	}

	// cotal mcp on the other machine dials the same way; with a wrong pin
	// its tools say why they cannot reach the mesh.
	mc := startMCP(t, cotalEnv(other), cotalBin, "--server", remote, "--creds", alice, "--tls-pin", up.TLSPin, "mcp")
	mc.ok("cotal_dm", map[string]any{"to": "bob", "text": "from mcp elsewhere"})
	inboxOf("from mcp elsewhere")
	bad := startMCP(t, cotalEnv(other), cotalBin, "--server", remote, "--creds", alice, "--tls-pin", wrong, "mcp")
	waitFor(t, 20*time.Second, func() error {
		if text, isErr := bad.call("cotal_dm", map[string]any{"to": "bob", "text": "to an impostor"}); !isErr || !strings.Contains(text+bad.stderr.String(), "does not match the pin") {
			return fmt.Errorf("cotal_dm with a wrong pin: error %v %q, stderr %q; want it to say the fingerprint did not match", isErr, text, bad.stderr)
		}
		return nil
	})

	// A seat started by the manager sends through the same listener.
	if out, stderr, code := runIn(t, home, dir, "spawn", "shell"); code != 0 {
		t.Fatalf("spawn: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "input", "shell", shellQuote(cotalBin)+" send dm bob from-the-seat-$((2+3))"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	inboxOf("from-the-seat-5")

	out, stderr, code = runIn(t, home, dir, "status")
	if code != 0 || !strings.Contains(out, "on "+host+" beyond loopback, TLS only") || !strings.Contains(out, "tls pin    "+up.TLSPin) {
		t.Fatalf("status: exit %d\n%s%s\nwant it to say the mesh listens on %s with TLS, pin %s", code, out, stderr, host, up.TLSPin)
	}
	out, stderr, code = as(alice, up.TLSPin, "status")
	if !strings.Contains(out, "tls pin    "+up.TLSPin) {
		t.Fatalf("status from elsewhere: exit %d\n%s%s\nwant the pin it verified", code, out, stderr)
	}
}

// mintIn mints name on the mesh home runs for dir and returns its creds
// file.
func mintIn(t *testing.T, home, dir, name string) string {
	t.Helper()
	out, stderr, code := runIn(t, home, dir, "mint", name, "--json")
	var m mintedID
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.Creds == "" {
		t.Fatalf("mint %s: exit %d\n%s%s", name, code, out, stderr)
	}
	return m.Creds
}

// impostor listens on loopback as a NATS server demanding TLS with a
// self-signed certificate of its own, for one client; sent gives what
// that client wrote after the handshake.
func impostor(t *testing.T) (addr string, sent <-chan string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "impostor"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- ""
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(15 * time.Second))
		_, _ = io.WriteString(c, `INFO {"server_id":"impostor","version":"2.12.0","auth_required":true,"tls_required":true,"nonce":"abcdefgh","max_payload":1048576,"proto":1}`+"\r\n")
		var read bytes.Buffer
		tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
		if tc.Handshake() == nil {
			_, _ = io.Copy(&read, tc)
		}
		got <- read.String()
	}()
	return ln.Addr().String(), got
}

// credsJWT is the user JWT a creds file holds.
func credsJWT(t *testing.T, creds string) string {
	t.Helper()
	b, err := os.ReadFile(creds)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "-----BEGIN NATS USER JWT-----")
	jwt, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
	if !ok || len(jwt) < 20 {
		t.Fatalf("no user JWT in %s", creds)
	}
	return jwt
}
