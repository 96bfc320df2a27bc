package kubeconfig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/agessh"
	"golang.org/x/crypto/ssh"
)

func newAgeKey(t testing.TB) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// newSSHKey returns an ssh-ed25519 identity and its authorized_keys line.
func newSSHKey(t testing.TB) (age.Identity, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, err := agessh.NewEd25519Identity(priv)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return id, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + " alice@laptop"
}

// Sealed to an age key or an SSH key, the payload opens with that key only.
func TestSealRoundTrip(t *testing.T) {
	t.Parallel()
	ageID := newAgeKey(t)
	sshID, sshLine := newSSHKey(t)
	other := newAgeKey(t)
	plain := bytes.Repeat([]byte("kubeconfig payload "), 150) // about 2.8 KiB, a real payload's size
	for _, tc := range []struct {
		name      string
		recipient string
		id        age.Identity
	}{
		{"age", ageID.Recipient().String(), ageID},
		{"ssh-ed25519", sshLine, sshID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sealed, err := Seal(plain, tc.recipient)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkSealedText(sealed); err != nil {
				t.Fatalf("sealed text is not OneGate-safe base64url: %v", err)
			}
			got, err := Open(sealed, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, plain) {
				t.Fatal("opened payload differs")
			}
			if _, err := Open(sealed, other); !errors.Is(err, ErrNotForYou) {
				t.Fatalf("another key: err %v, want ErrNotForYou", err)
			}
			// Several identities: the one that fits is used.
			if _, err := Open(sealed, other, tc.id); err != nil {
				t.Fatalf("with the right key among others: %v", err)
			}
		})
	}
}

// Every single changed byte of the sealed data, and every cut, is caught
// by age's authentication: never a different plaintext.
func TestSealTamperingDetected(t *testing.T) {
	t.Parallel()
	id := newAgeKey(t)
	plain := []byte(`{"v":1,"note":"a payload long enough to span the header and the body"}`)
	sealed, err := Seal(plain, id.Recipient().String())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := b64.DecodeString(sealed)
	for i := range raw {
		for _, mask := range []byte{0x01, 0x80} {
			mod := bytes.Clone(raw)
			mod[i] ^= mask
			got, err := Open(b64.EncodeToString(mod), id)
			if err == nil {
				t.Fatalf("byte %d ^ %#x: opened (%q), want an error", i, mask, got)
			}
			if !errors.Is(err, ErrTampered) && !errors.Is(err, ErrNotForYou) {
				t.Fatalf("byte %d: err %v, want ErrTampered or ErrNotForYou", i, err)
			}
		}
	}
	for _, n := range []int{0, 10, len(raw) / 2, len(raw) - 1} {
		if _, err := Open(b64.EncodeToString(raw[:n]), id); err == nil {
			t.Fatalf("cut to %d bytes: opened", n)
		}
	}
	for _, bad := range []string{"", "not base64!", sealed + "=", strings.Repeat("A", MaxSealed+1), base64.StdEncoding.EncodeToString(raw)} {
		if _, err := Open(bad, id); !errors.Is(err, ErrTampered) {
			t.Errorf("Open(%.20q...): err %v, want ErrTampered", bad, err)
		}
	}
}

func TestNormalizeRecipient(t *testing.T) {
	t.Parallel()
	id := newAgeKey(t)
	_, sshLine := newSSHKey(t)
	f := strings.Fields(sshLine)
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{id.Recipient().String(), id.Recipient().String(), true},
		{"  " + id.Recipient().String() + "\n", id.Recipient().String(), true},
		{sshLine, f[0] + " " + f[1], true},
		{f[0] + " " + f[1], f[0] + " " + f[1], true},
		{"age1notakey", "", false},
		{"ssh-dss AAAAB3NzaC1kc3MAAACBAP", "", false},
		{"ssh-ed25519 !!!", "", false},
		{"ssh-rsa " + f[1], "", false}, // the blob says ed25519
		{"", "", false},
		{"hello", "", false},
	} {
		got, err := NormalizeRecipient(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("NormalizeRecipient(%.30q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzOpen(f *testing.F) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		f.Fatal(err)
	}
	sealed, err := Seal([]byte("seed"), id.Recipient().String())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealed)
	f.Add("")
	f.Add("YWdlLWVuY3J5cHRpb24ub3JnL3YxCi0-IFgyNTUxOQ")
	f.Fuzz(func(t *testing.T, s string) {
		plain, err := Open(s, id)
		if err == nil && s != sealed && string(plain) != "seed" {
			t.Fatalf("opened a text the key never sealed: %q", plain)
		}
	})
}
