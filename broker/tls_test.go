package broker_test

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

// dialTrusting connects with creds, verifying the server as trust says.
func dialTrusting(u, creds string, trust config.TLSTrust) (*nats.Conn, error) {
	cfg, err := trust.ClientConfig()
	if err != nil {
		return nil, err
	}
	opts := []nats.Option{nats.UserCredentials(creds), nats.Timeout(5 * time.Second), nats.MaxReconnects(0)}
	if cfg != nil {
		opts = append(opts, nats.Secure(cfg))
	}
	return nats.Connect(u, opts...)
}

// startReachable starts a provisioned broker listening on the machine's
// reachable address (testutil.ReachableIP) and mints an operator creds
// file on it.
func startReachable(t *testing.T, dir string) (*broker.Broker, string) {
	t.Helper()
	b, err := broker.Start(broker.Options{Paths: config.Paths{Space: "tls", StoreDir: dir}, Host: testutil.ReachableIP()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	op, err := b.Internal() // in process: no TLS, as the host's own parts connect
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.Provision(testmesh.Ctx(t), op, "tls", false, b.MaxStore()); err != nil {
		t.Fatal(err)
	}
	creds, _ := testmesh.Mint(t, b, broker.Identity{Space: "tls", Principal: wire.Principal{Owner: "local", Actor: "alice"}, Profile: wire.ProfileOperator})
	return b, creds
}

func TestHostListenerTakesOnlyVerifiedTLS(t *testing.T) {
	dir := t.TempDir()
	b, creds := startReachable(t, dir)
	u, err := url.Parse(b.URL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "tls" || u.Hostname() != testutil.ReachableIP() {
		t.Fatalf("URL %s: want tls://%s:port", b.URL(), testutil.ReachableIP())
	}
	if len(b.TLSPin()) != 64 {
		t.Fatalf("pin %q is no SHA-256 fingerprint", b.TLSPin())
	}

	t.Run("plaintext client", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		info, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(info, `"tls_required":true`) {
			t.Fatalf("INFO does not require TLS: %s", info)
		}
		if _, err := io.WriteString(c, "CONNECT {\"verbose\":false}\r\nPING\r\n"); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(r)
		if bytes.Contains(rest, []byte("PONG")) {
			t.Fatalf("a plaintext client got an answer: %q", rest)
		}
	})
	t.Run("client trusting the system roots", func(t *testing.T) {
		nc, err := dialTrusting(strings.Replace(b.URL(), "tls://", "nats://", 1), creds, config.TLSTrust{})
		if err == nil {
			nc.Close()
			t.Fatal("a client that does not know the self-signed certificate connected")
		}
	})
	for _, trust := range []config.TLSTrust{
		{Pin: b.TLSPin()},
		{Pin: "SHA256:" + strings.ToUpper(b.TLSPin())},
		{CA: config.Paths{StoreDir: dir}.TLSCertFile()}, // the generated certificate is its own CA
	} {
		nc, err := dialTrusting(b.URL(), creds, trust)
		if err != nil {
			t.Fatalf("trusting %+v: %v", trust, err)
		}
		if _, err := nc.RTT(); err != nil {
			t.Fatalf("trusting %+v: %v", trust, err)
		}
		if !nc.TLSRequired() {
			t.Fatal("the server did not require TLS")
		}
		nc.Close()
	}
	t.Run("wrong pin", func(t *testing.T) {
		wrong := strings.Repeat("ab", 32)
		_, err := dialTrusting(b.URL(), creds, config.TLSTrust{Pin: wrong})
		if !errors.Is(err, config.ErrUntrustedServer) || !strings.Contains(err.Error(), b.TLSPin()) {
			t.Fatalf("err = %v, want untrusted naming the fingerprint %s", err, b.TLSPin())
		}
	})
	t.Run("wrong CA", func(t *testing.T) {
		other := selfSigned(t, "other")
		ca := t.TempDir() + "/ca.pem"
		if err := os.WriteFile(ca, pemOf(other.Certificate[0]), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := dialTrusting(b.URL(), creds, config.TLSTrust{CA: ca})
		if !errors.Is(err, config.ErrUntrustedServer) || !strings.Contains(err.Error(), b.TLSPin()) {
			t.Fatalf("err = %v, want untrusted naming the fingerprint %s", err, b.TLSPin())
		}
	})
}

// A client told to pin a certificate sends nothing after the handshake
// to a server that shows another certificate, or that offers no TLS at
// all: its credential never leaves it.
func TestPinnedClientSendsNoCredentialToAnImpostor(t *testing.T) {
	_, creds := startReachable(t, t.TempDir())
	token := credsJWT(t, creds)
	impostor := selfSigned(t, "impostor")
	pin := strings.Repeat("0", 64)
	for _, offersTLS := range []bool{true, false} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				got <- nil
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			info := `INFO {"server_id":"x","version":"2.15.2","auth_required":true,"nonce":"abcdefgh","max_payload":1048576,"proto":1`
			if offersTLS {
				info += `,"tls_required":true`
			}
			_, _ = io.WriteString(c, info+"}\r\n")
			var read bytes.Buffer
			if offersTLS {
				tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{impostor}})
				if err := tc.Handshake(); err == nil {
					_, _ = io.Copy(&read, tc)
				}
			} else {
				_, _ = io.Copy(&read, c)
			}
			got <- read.Bytes()
		}()
		_, err = dialTrusting("nats://"+ln.Addr().String(), creds, config.TLSTrust{Pin: pin})
		if err == nil {
			t.Fatalf("tls offered %v: a pinned client connected to an impostor", offersTLS)
		}
		if offersTLS && (!errors.Is(err, config.ErrUntrustedServer) || !strings.Contains(err.Error(), config.Fingerprint(impostor.Certificate[0]))) {
			t.Fatalf("err = %v, want untrusted naming the impostor's fingerprint", err)
		}
		sent := <-got
		if bytes.Contains(sent, []byte("CONNECT")) || bytes.Contains(sent, []byte(token)) {
			t.Fatalf("tls offered %v: the client sent its credential to the impostor: %q", offersTLS, sent)
		}
		ln.Close()
	}
}

func TestGeneratedPairIsReusedAndItsKeyPrivate(t *testing.T) {
	dir := t.TempDir()
	b := mustStart(t, dir)
	pin := b.TLSPin()
	b.Shutdown()
	p := config.Paths{Space: "tls", StoreDir: dir}
	fi, err := os.Stat(p.TLSKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	pair, err := tls.LoadX509KeyPair(p.TLSCertFile(), p.TLSKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	if _, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok || leaf.PublicKeyAlgorithm != x509.ECDSA {
		t.Fatalf("key is %v, want ECDSA P-256", leaf.PublicKeyAlgorithm)
	}
	for _, h := range []string{"localhost", "127.0.0.1", testutil.ReachableIP()} {
		if err := leaf.VerifyHostname(h); err != nil {
			t.Errorf("certificate does not name %s: %v", h, err)
		}
	}
	again := mustStart(t, dir)
	if again.TLSPin() != pin {
		t.Fatalf("second start serves %s, first %s: the pair was not reused", again.TLSPin(), pin)
	}
}

func TestOpenMeshRefusesToListenBeyondLoopback(t *testing.T) {
	for _, host := range []string{"0.0.0.0", "192.0.2.1", "example.org"} {
		_, err := broker.Start(broker.Options{Paths: config.Paths{Space: "tls", StoreDir: t.TempDir()}, Open: true, Host: host})
		if !errors.Is(err, broker.ErrOpenBeyondLoopback) {
			t.Fatalf("open on %s: err = %v, want ErrOpenBeyondLoopback", host, err)
		}
	}
	b, err := broker.Start(broker.Options{Paths: config.Paths{Space: "tls", StoreDir: t.TempDir()}, Open: true, Host: "127.0.0.1"})
	if err != nil {
		t.Fatalf("open on loopback with TLS: %v", err)
	}
	b.Shutdown()
}

func mustStart(t *testing.T, dir string) *broker.Broker {
	t.Helper()
	b, err := broker.Start(broker.Options{Paths: config.Paths{Space: "tls", StoreDir: dir}, Host: testutil.ReachableIP()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	return b
}

func credsJWT(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := jwt.ParseDecoratedJWT(raw)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// selfSigned is a throwaway certificate for 127.0.0.1.
func selfSigned(t *testing.T, name string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func pemOf(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestRemoteURLsAreWhatAnotherMachineDials: none for loopback, the URL
// itself for a named address, and for every interface the URL on each
// address of the machine (the client URL alone when it has none).
func TestRemoteURLsAreWhatAnotherMachineDials(t *testing.T) {
	for _, h := range []string{"", "127.0.0.1", "localhost", "::1"} {
		if got := broker.RemoteURLs(h, "tls://127.0.0.1:4222"); got != nil {
			t.Errorf("host %q: %q, want none", h, got)
		}
	}
	if got := broker.RemoteURLs("192.0.2.9", "tls://192.0.2.9:4222"); len(got) != 1 || got[0] != "tls://192.0.2.9:4222" {
		t.Errorf("named address: %q", got)
	}
	got := broker.RemoteURLs("0.0.0.0", "tls://127.0.0.1:4222")
	if len(got) == 0 {
		t.Fatal("every interface: no URL")
	}
	ip := testutil.ReachableIP()
	for _, u := range got {
		if !strings.HasPrefix(u, "tls://") || !strings.HasSuffix(u, ":4222") {
			t.Errorf("every interface: %q is not a tls:// URL on the port", u)
		}
	}
	if want := "tls://" + ip + ":4222"; ip != "127.0.0.1" && !slices.Contains(got, want) {
		t.Errorf("every interface: %q, want %s among them", got, want)
	}
}
