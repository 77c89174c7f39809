package config

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrUntrustedServer is returned (wrapped) by a client's TLS handshake when
// the server's certificate matches neither the pin nor the CA it was told
// to trust. The handshake fails before the client sends anything else, so
// no credential has left the machine.
var ErrUntrustedServer = errors.New("server certificate not trusted")

// TLSCertFile is the certificate a mesh reachable from other machines
// serves when none is given (generated once, reused).
func (p Paths) TLSCertFile() string { return filepath.Join(p.AuthDir(), "tls.crt") }

// TLSKeyFile is TLSCertFile's private key (0600).
func (p Paths) TLSKeyFile() string { return filepath.Join(p.AuthDir(), "tls.key") }

// Fingerprint is the SHA-256 of a certificate's DER bytes in lowercase hex:
// what `up` prints and --tls-pin takes.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// NormalizePin turns a fingerprint as a person may paste it (upper case,
// colons, a "sha256:" prefix) into Fingerprint's form, refusing anything
// that is not 32 bytes of hex.
func NormalizePin(s string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(s))
	p = strings.TrimPrefix(strings.TrimPrefix(p, "sha256:"), "sha256 ")
	p = strings.NewReplacer(":", "", " ", "").Replace(p)
	if b, err := hex.DecodeString(p); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("TLS pin %q is not a SHA-256 fingerprint (64 hex digits, as `cotal up --host` prints it)", s)
	}
	return p, nil
}

// TLSTrust is how a client verifies the mesh's server: a pinned
// fingerprint of its certificate (no CA needed, no host name checked), or
// a CA file whose certificates must have signed it for the host dialled.
// The zero value trusts what the system trusts, as nats.go would.
type TLSTrust struct {
	CA  string // PEM file of the CA certificates to trust
	Pin string // SHA-256 of the server's leaf certificate (NormalizePin's form or as pasted)
}

// IsZero says no pin and no CA were given.
func (t TLSTrust) IsZero() bool { return t.CA == "" && t.Pin == "" }

// Check refuses a pin that is no fingerprint, a CA file that holds no
// certificate, and both at once.
func (t TLSTrust) Check() error {
	_, err := t.ClientConfig()
	return err
}

// ClientConfig is the TLS configuration a client dials with: nil for the
// zero value (the server decides whether TLS is used). With a pin or a CA
// every connection must be TLS and the handshake itself refuses a server
// whose certificate does not match, naming the fingerprint it saw.
func (t TLSTrust) ClientConfig() (*tls.Config, error) {
	if t.IsZero() {
		return nil, nil
	}
	if t.CA != "" && t.Pin != "" {
		return nil, errors.New("give either a TLS pin or a CA file, not both")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} // verified by VerifyConnection below
	if t.Pin != "" {
		pin, err := NormalizePin(t.Pin)
		if err != nil {
			return nil, err
		}
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return fmt.Errorf("%w: it sent no certificate", ErrUntrustedServer)
			}
			if seen := Fingerprint(cs.PeerCertificates[0].Raw); seen != pin {
				return fmt.Errorf("%w: its certificate's SHA-256 fingerprint %s does not match the pin %s; nothing was sent to it, not even the credential", ErrUntrustedServer, seen, pin)
			}
			return nil
		}
		return cfg, nil
	}
	pem, err := os.ReadFile(t.CA)
	if err != nil {
		return nil, fmt.Errorf("TLS CA file: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("TLS CA file %s holds no PEM certificate", t.CA)
	}
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("%w: it sent no certificate", ErrUntrustedServer)
		}
		leaf := cs.PeerCertificates[0]
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: cs.ServerName}); err != nil {
			return fmt.Errorf("%w: its certificate (SHA-256 %s) does not verify against %s for %s (%v); nothing was sent to it, not even the credential", ErrUntrustedServer, Fingerprint(leaf.Raw), t.CA, cs.ServerName, err)
		}
		return nil
	}
	return cfg, nil
}
