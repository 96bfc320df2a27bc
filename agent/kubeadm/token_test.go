package kubeadm

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

func TestValidToken(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"abcdef.0123456789abcdef":   true,
		"000000.0000000000000000":   true,
		"zzzzzz.zzzzzzzzzzzzzzzz":   true,
		"":                          false,
		"abcdef0123456789abcdef":    false, // no dot
		"abcdef.0123456789abcde":    false, // secret too short
		"abcdef.0123456789abcdef0":  false, // secret too long
		"abcde.0123456789abcdefg":   false, // dot misplaced
		"ABCDEF.0123456789abcdef":   false, // upper case
		"abcdef:0123456789abcdef":   false,
		"abcdef.0123456789abcdeé":   false,
		"abcdef.0123456789abcdef\n": false, // \z, not $
		" abcdef.0123456789abcdef":  false,
		"abc-ef.0123456789abcdef":   false,
	}
	for in, want := range cases {
		if got := ValidToken(in); got != want {
			t.Errorf("ValidToken(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestGenerateTokenMapsBytesUniformly(t *testing.T) {
	t.Parallel()
	seq := make([]byte, 256)
	for i := range seq {
		seq[i] = byte(i)
	}
	tok, err := GenerateToken(bytes.NewReader(seq))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tok.Reveal(), "012345.6789abcdefghijkl"; got != want {
		t.Errorf("token = %q, want %q", got, want)
	}
	// Bytes 252..255 would favour 0-3 if reduced mod 36; they are skipped.
	skewed := append([]byte{252, 253, 254, 255}, seq...)
	tok2, err := GenerateToken(bytes.NewReader(append(skewed, make([]byte, 64)...)))
	if err != nil {
		t.Fatal(err)
	}
	if tok2.Reveal() != tok.Reveal() {
		t.Errorf("bytes >= 252 not rejected: %q", tok2.Reveal())
	}
	// 36 and 72 map to the same character as 0: the reduction is mod 36.
	wrap := append([]byte{36, 72, 108, 144, 180, 216}, seq[:40]...)
	tok3, err := GenerateToken(bytes.NewReader(wrap))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok3.Reveal(), "000000.") {
		t.Errorf("token = %q, want id 000000", tok3.Reveal())
	}
}

func TestGenerateTokenCryptoRand(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 200 {
		tok, err := GenerateToken(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !ValidToken(tok.Reveal()) {
			t.Fatalf("generated token fails ValidToken")
		}
		if seen[tok.Reveal()] {
			t.Fatalf("duplicate token after %d draws", len(seen))
		}
		seen[tok.Reveal()] = true
	}
}

func TestGenerateTokenReaderFailure(t *testing.T) {
	t.Parallel()
	_, err := GenerateToken(bytes.NewReader(make([]byte, 10)))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
	}
	// A reader that only yields rejected bytes must end, not loop forever.
	_, err = GenerateToken(io.LimitReader(constReader(255), 4096))
	if err == nil {
		t.Error("want an error from an exhausted reader of rejected bytes")
	}
}

type constReader byte

func (c constReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

func TestCheckTokenKeepsSecretOutOfErrors(t *testing.T) {
	t.Parallel()
	bad := "ABCDEF.0123456789abcdef"
	err := checkToken("Token", secret(bad))
	if !errors.Is(err, ErrToken) || strings.Contains(err.Error(), bad) {
		t.Errorf("err = %v: want ErrToken without the value", err)
	}
}

// TestInitConfigToken reads the token back from a rendered init config, the
// one place a rerun takes it from.
func TestInitConfigToken(t *testing.T) {
	t.Parallel()
	out, err := RenderInit(InitParams{KubernetesVersion: "v1.37.2", NodeName: "master-3", AdvertiseAddress: netip.MustParseAddr("10.0.0.3"),
		Token: vmcontext.NewSecret("abcdef.0123456789abcdef"), TokenTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := InitConfigToken(out)
	if err != nil || tok.Reveal() != "abcdef.0123456789abcdef" {
		t.Fatalf("InitConfigToken = %v, %v", tok.Reveal(), err)
	}
	for name, bad := range map[string]string{
		"no init document": "kind: ClusterConfiguration\n",
		"no token":         "kind: InitConfiguration\nbootstrapTokens: []\n",
		"garbage token":    "kind: InitConfiguration\nbootstrapTokens:\n- token: GARBAGE-secretvalue\n",
		"not YAML":         "kind: [",
	} {
		_, err := InitConfigToken([]byte(bad))
		if !errors.Is(err, ErrToken) || strings.Contains(err.Error(), "secretvalue") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzInitConfigToken: a hand-edited init config gives a valid token or an
// error that does not echo it.
func FuzzInitConfigToken(f *testing.F) {
	f.Add("kind: InitConfiguration\nbootstrapTokens:\n- token: abcdef.0123456789abcdef\n")
	f.Add("kind: ClusterConfiguration\n---\nkind: InitConfiguration\n")
	f.Fuzz(func(t *testing.T, config string) {
		tok, err := InitConfigToken([]byte(config))
		if err == nil && !ValidToken(tok.Reveal()) {
			t.Fatalf("accepted %q", tok.Reveal())
		}
	})
}
