package access

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/onekube/onekube/context/kubeconfig"
)

// The key made on first use is 0600 in a 0700 directory, in age-keygen's
// format, and loads back to the same recipient; concurrent first uses end
// with one key.
func TestCreateIdentityModes(t *testing.T) {
	t.Parallel()
	path := DefaultIdentityPath(filepath.Join(t.TempDir(), "config"))
	var wg sync.WaitGroup
	ids := make([]Identity, 4)
	for i := range ids {
		wg.Go(func() {
			id, _, err := LoadOrCreateIdentity(path, time.Now())
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for _, id := range ids[1:] {
		if id.Recipient != ids[0].Recipient {
			t.Fatal("concurrent first uses made different keys")
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %04o, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Dir(path))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode %04o, want 0700", di.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "# public key: "+ids[0].Recipient) || !strings.Contains(string(b), "AGE-SECRET-KEY-1") {
		t.Errorf("not age-keygen's format:\n%s", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	again, err := LoadIdentity(path)
	if err != nil || again.Recipient != ids[0].Recipient {
		t.Fatalf("reload: %v", err)
	}
	// A key others can read is refused, as ssh refuses one.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadIdentity(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("0644 key: err %v", err)
	}
	if _, err := LoadIdentity(filepath.Join(t.TempDir(), "none")); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("missing key: err %v", err)
	}
}

func TestSSHIdentity(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	blk, err := ssh.MarshalPrivateKey(priv, "alice@laptop")
	if err != nil {
		t.Fatal(err)
	}
	id, err := ParseIdentity(pem.EncodeToMemory(blk))
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := ssh.NewPublicKey(pub)
	want, _ := kubeconfig.NormalizeRecipient(string(ssh.MarshalAuthorizedKey(pk)))
	if id.Recipient != want {
		t.Errorf("recipient %q, want %q", id.Recipient, want)
	}
	sealed, err := kubeconfig.Seal([]byte("x"), want)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubeconfig.Open(sealed, id.Identities()...); err != nil {
		t.Errorf("the SSH key cannot open what was sealed to it: %v", err)
	}
	enc, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseIdentity(pem.EncodeToMemory(enc)); err == nil || !strings.Contains(err.Error(), "passphrase") {
		t.Errorf("passphrase-protected key: err %v", err)
	}
	for _, junk := range []string{"", "hello", "AGE-SECRET-KEY-1XYZ", "-----BEGIN OPENSSH PRIVATE KEY-----\nzzz\n-----END OPENSSH PRIVATE KEY-----\n"} {
		if _, err := ParseIdentity([]byte(junk)); err == nil || strings.Contains(err.Error(), "XYZ") {
			t.Errorf("ParseIdentity(%q): err %v", junk, err)
		}
	}
}
