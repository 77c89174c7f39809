package ep

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// ErrMalformedInstanceFile is returned when an instance file exists but does not hold a valid instance id; startup must abort rather than mint a new identity over it.
var ErrMalformedInstanceFile = errors.New("malformed instance file")

// instanceFile is the persisted identity of one endpoint instance.
type instanceFile struct {
	InstanceID string `json:"instanceId"`
}

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewInstanceID mints an instance id: 20 CSPRNG bytes in lowercase base32 (32 characters).
func NewInstanceID() string {
	var b [20]byte
	rand.Read(b[:]) // never fails since Go 1.24
	return lowerBase32.EncodeToString(b[:])
}

// LoadOrCreateInstanceID returns the instance id persisted at path, minting and writing one (0600, create-only) when the file does not exist. A file that exists but is malformed is ErrMalformedInstanceFile: an instance id is never re-minted.
func LoadOrCreateInstanceID(path string) (string, error) {
	if id, err := readInstanceFile(path); !errors.Is(err, os.ErrNotExist) {
		return id, err
	}
	id := NewInstanceID()
	b, _ := json.Marshal(instanceFile{InstanceID: id})
	tmp, err := os.CreateTemp(filepath.Dir(path), ".instance-*")
	if err != nil {
		return "", fmt.Errorf("writing instance file: %w", err)
	}
	defer os.Remove(tmp.Name())
	// One err for every step: a failed write must never be linked into place.
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(append(b, '\n'))
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing instance file: %w", err)
	}
	// A hard link is create-only: of two starters racing, one wins and the other reads its id.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return readInstanceFile(path)
		}
		return "", fmt.Errorf("writing instance file: %w", err)
	}
	return id, nil
}

func readInstanceFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var f instanceFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return "", fmt.Errorf("%s: %w: %v (fix or remove it by hand; it is never re-minted)", path, ErrMalformedInstanceFile, err)
	}
	if !proto.ValidID(f.InstanceID) {
		return "", fmt.Errorf("%s: %w: instanceId %q is not 1-64 of A-Z a-z 0-9 _ -", path, ErrMalformedInstanceFile, f.InstanceID)
	}
	return f.InstanceID, nil
}
