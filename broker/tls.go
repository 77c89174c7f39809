package broker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cotal-go/cotal/config"
)

// ErrOpenBeyondLoopback is returned by Start when an open mesh (no auth)
// is asked to listen on an address other machines reach.
var ErrOpenBeyondLoopback = errors.New("an open mesh listens on loopback only")

// TLSFiles name the certificate a mesh reachable from other machines
// serves. Empty Cert and Key: a self-signed pair generated into the
// store once and reused. CA, when set, must have signed Cert; clients
// elsewhere verify with it (--tls-ca), or pin the certificate.
type TLSFiles struct {
	Cert, Key, CA string
}

// Loopback says whether host names only this machine: a loopback IP or
// localhost. An unspecified address (0.0.0.0, ::) is every interface.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckHost refuses a listen address the server cannot bind as given:
// an IP or a host name, no port, no scheme.
func CheckHost(host string) error {
	if host == "" {
		return errors.New("no address given")
	}
	if _, _, err := net.SplitHostPort(host); err == nil {
		return fmt.Errorf("%q carries a port: give the address only (the port is chosen free and written to broker.json)", host)
	}
	if net.ParseIP(host) == nil && !validHostName(host) {
		return fmt.Errorf("%q is not an IP address or host name", host)
	}
	return nil
}

func validHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// serverTLS loads (or generates) the pair the listener on host serves and
// returns its configuration and the leaf's fingerprint.
func serverTLS(p config.Paths, host string, f TLSFiles) (*tls.Config, string, error) {
	certFile, keyFile := f.Cert, f.Key
	switch {
	case (certFile == "") != (keyFile == ""):
		return nil, "", errors.New("give both a TLS certificate and its key, or neither (a self-signed pair is then generated into the store)")
	case certFile == "":
		certFile, keyFile = p.TLSCertFile(), p.TLSKeyFile()
		if err := ensureSelfSigned(certFile, keyFile, host); err != nil {
			return nil, "", fmt.Errorf("self-signed TLS pair in %s: %w", p.AuthDir(), err)
		}
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, "", fmt.Errorf("TLS pair %s, %s: %w", certFile, keyFile, err)
	}
	if f.CA != "" {
		if err := verifiedBy(pair, f.CA); err != nil {
			return nil, "", err
		}
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	return cfg, config.Fingerprint(pair.Certificate[0]), nil
}

// verifiedBy refuses a certificate the CA file did not sign: clients told
// to verify with that CA would refuse it anyway, later and far away.
func verifiedBy(pair tls.Certificate, caFile string) error {
	b, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("TLS CA file: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b) {
		return fmt.Errorf("TLS CA file %s holds no PEM certificate", caFile)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	inter := x509.NewCertPool()
	for _, der := range pair.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
		return fmt.Errorf("the TLS certificate does not verify against %s: %w", caFile, err)
	}
	return nil
}

// ensureSelfSigned leaves a self-signed ECDSA P-256 pair at certFile and
// keyFile (key 0600) that names host, localhost and 127.0.0.1: the one
// there when it names host and has not expired, else a new one.
func ensureSelfSigned(certFile, keyFile, host string) error {
	if pair, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil && time.Now().Before(leaf.NotAfter.Add(-24*time.Hour)) && names(leaf, host) {
			return nil
		}
	}
	if err := config.EnsureDir(filepath.Dir(certFile), 0o700); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "cotal mesh " + host},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // so the certificate itself can be a client's --tls-ca
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsUnspecified() && !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		}
	} else if host != "localhost" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := config.WriteFileAtomic(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return err
	}
	return config.WriteFileAtomic(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// names says whether the certificate is valid for host (an unspecified
// address needs nothing more than loopback's names).
func names(c *x509.Certificate, host string) bool {
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return true
	}
	return c.VerifyHostname(host) == nil
}

// clientURL is the URL clients of this machine dial: the server's, with
// an unspecified listen address (every interface) replaced by 127.0.0.1,
// which the generated certificate names.
func clientURL(raw string, secure bool) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if h, port, err := net.SplitHostPort(u.Host); err == nil {
		if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
			u.Host = net.JoinHostPort("127.0.0.1", port)
		}
	}
	if secure {
		u.Scheme = "tls"
	}
	return u.String()
}

// RemoteURLs are the URLs another machine dials to reach a mesh listening
// on host whose client URL is url: url itself for a named address; for an
// unspecified one (every interface), url on each up interface's
// non-loopback address, or url alone when there is none. Nil when host
// is loopback.
func RemoteURLs(host, raw string) []string {
	if host == "" || Loopback(host) {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsUnspecified() {
		return []string{raw}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return []string{raw}
	}
	_, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return []string{raw}
	}
	var out []string
	for _, a := range interfaceIPs(ip.To4() != nil) {
		v := *u
		v.Host = net.JoinHostPort(a, port)
		out = append(out, v.String())
	}
	if len(out) == 0 {
		return []string{raw}
	}
	return out
}

// interfaceIPs are the non-loopback, non-link-local addresses of the
// interfaces that are up (IPv4 only when v4).
func interfaceIPs(v4 bool) []string {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []string
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() || (v4 && n.IP.To4() == nil) {
				continue
			}
			out = append(out, n.IP.String())
		}
	}
	return out
}
