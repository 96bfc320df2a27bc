package access

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"filippo.io/age"
	"filippo.io/age/agessh"
	"golang.org/x/crypto/ssh"

	"github.com/onekube/onekube/context/kubeconfig"
)

// Identity is the requester's key: what opens answers, and the recipient
// (normalized) that names it in a cluster's authorized list.
type Identity struct {
	Path      string
	Recipient string
	ids       []age.Identity
}

// Identities returns what Open needs.
func (i Identity) Identities() []age.Identity { return i.ids }

// DefaultIdentityPath is the key onekube-flow generates on first use,
// under the user's configuration directory ($XDG_CONFIG_HOME or
// ~/.config).
func DefaultIdentityPath(configDir string) string {
	return filepath.Join(configDir, "onekube", "age-key.txt")
}

// ErrNoIdentity: the identity file does not exist.
var ErrNoIdentity = errors.New("no identity file")

// maxIdentityFile bounds what is read as a key file.
const maxIdentityFile = 64 << 10

// LoadIdentity reads an age identity file (age-keygen's format; the first
// key names the recipient) or an unencrypted ssh-ed25519 or ssh-rsa
// private key. A file others can read is refused, as ssh refuses one.
// Errors never quote the file's content.
func LoadIdentity(path string) (Identity, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Identity{}, fmt.Errorf("%w: %s", ErrNoIdentity, path)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("reading the key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Identity{}, fmt.Errorf("reading the key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Identity{}, fmt.Errorf("key %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return Identity{}, fmt.Errorf("key %s can be read by others (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIdentityFile+1))
	if err != nil {
		return Identity{}, fmt.Errorf("reading the key: %w", err)
	}
	if len(b) > maxIdentityFile {
		return Identity{}, fmt.Errorf("key %s is larger than %d KiB", path, maxIdentityFile>>10)
	}
	id, err := ParseIdentity(b)
	if err != nil {
		return Identity{}, fmt.Errorf("key %s: %w", path, err)
	}
	id.Path = path
	return id, nil
}

// ParseIdentity reads an identity from a key file's content.
func ParseIdentity(b []byte) (Identity, error) {
	if bytes.Contains(b, []byte("-----BEGIN")) {
		return parseSSHIdentity(b)
	}
	ids, err := age.ParseIdentities(bytes.NewReader(b))
	if err != nil {
		return Identity{}, errors.New("not an age identity file (AGE-SECRET-KEY-1...) nor an SSH private key")
	}
	x, ok := ids[0].(*age.X25519Identity)
	if !ok {
		return Identity{}, errors.New("the first key of the file is not an age X25519 key")
	}
	return Identity{Recipient: x.Recipient().String(), ids: ids}, nil
}

func parseSSHIdentity(b []byte) (Identity, error) {
	raw, err := ssh.ParseRawPrivateKey(b)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return Identity{}, errors.New("the SSH key is protected by a passphrase, which onekube-flow does not ask for; use an age key (the default) or an unencrypted key")
	case err != nil:
		return Identity{}, errors.New("not a readable SSH private key")
	}
	signer, err := ssh.NewSignerFromKey(raw)
	if err != nil {
		return Identity{}, errors.New("unsupported SSH key type")
	}
	rcpt, err := kubeconfig.NormalizeRecipient(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	if err != nil {
		return Identity{}, fmt.Errorf("SSH key: %w (age supports ssh-ed25519 and ssh-rsa)", err)
	}
	id, err := agessh.ParseIdentity(b)
	if err != nil {
		return Identity{}, errors.New("age cannot decrypt with this SSH key type (age supports ssh-ed25519 and ssh-rsa)")
	}
	return Identity{Recipient: rcpt, ids: []age.Identity{id}}, nil
}

// CreateIdentity generates an age key into path (mode 0600, its directory
// 0700), in age-keygen's format so `age -d -i` reads it too. It never
// replaces a file: when two runs race, the second loads the first's key.
func CreateIdentity(path string, now time.Time) (Identity, error) {
	x, err := age.GenerateX25519Identity()
	if err != nil {
		return Identity{}, fmt.Errorf("generating a key: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Identity{}, fmt.Errorf("creating %s: %w", dir, err)
	}
	text := fmt.Sprintf("# created: %s\n# public key: %s\n# onekube-flow kubeconfig: kubeconfigs are sealed to this key; keep it 0600.\n%s\n",
		now.UTC().Format(time.RFC3339), x.Recipient(), x)
	tmp, err := os.CreateTemp(dir, ".age-key-*")
	if err != nil {
		return Identity{}, fmt.Errorf("writing the key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return Identity{}, fmt.Errorf("writing the key: %w", err)
	}
	if _, err := tmp.WriteString(text); err != nil {
		_ = tmp.Close()
		return Identity{}, fmt.Errorf("writing the key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return Identity{}, fmt.Errorf("writing the key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return Identity{}, fmt.Errorf("writing the key: %w", err)
	}
	// link fails if path exists: a key is never overwritten.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return LoadIdentity(path)
		}
		return Identity{}, fmt.Errorf("writing the key: %w", err)
	}
	_ = syncDir(dir)
	return Identity{Path: path, Recipient: x.Recipient().String(), ids: []age.Identity{x}}, nil
}

// LoadOrCreateIdentity loads path, generating it first when it does not
// exist; created says whether it did.
func LoadOrCreateIdentity(path string, now time.Time) (id Identity, created bool, err error) {
	id, err = LoadIdentity(path)
	if errors.Is(err, ErrNoIdentity) {
		id, err = CreateIdentity(path, now)
		return id, err == nil, err
	}
	return id, false, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
