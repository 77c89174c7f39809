package broker_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

func TestMintedCredsCarryTheIdentity(t *testing.T) {
	p := config.Paths{Space: "My-Space", StoreDir: t.TempDir()}
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		t.Fatal(err)
	}
	in := broker.Identity{
		Principal: wire.Principal{Owner: "local", Actor: "Alice"}, Role: "Reviewer",
		Subscribe: []string{"Team.Backend"}, AllowSubscribe: []string{"Team.Backend"}, AllowPublish: []string{"Team.>"},
	}
	c, err := auth.Mint(in)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.creds")
	if err := broker.WriteCreds(path, c); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("creds mode %v, want 0600", st.Mode().Perm())
	}
	got, err := broker.ReadCredsIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	want := c.Identity
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
	if st, _ := os.Stat(broker.KeysFile(p)); st.Mode().Perm() != 0o600 {
		t.Fatalf("keys mode %v, want 0600", st.Mode().Perm())
	}
}

func TestMintRefusesBadACLEntries(t *testing.T) {
	auth, err := broker.LoadAuthority(config.Paths{Space: "s", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []broker.Identity{
		{Principal: wire.Principal{Owner: "local", Actor: "a"}, AllowPublish: []string{"foo/bar"}},
		{Principal: wire.Principal{Owner: "local", Actor: "a"}, Subscribe: []string{"x"}, AllowSubscribe: []string{"y"}},
		{Principal: wire.Principal{Owner: "local", Actor: "a-b"}},
		{Principal: wire.Principal{Owner: "local", Actor: "a"}, Role: "re.view"},
	} {
		if _, err := auth.Mint(id); err == nil {
			t.Errorf("minted %+v", id)
		}
	}
}
