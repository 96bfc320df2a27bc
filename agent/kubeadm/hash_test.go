package kubeadm

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

// testCert returns a self-signed certificate PEM and its public key.
func testCert(t testing.TB, isCA bool) ([]byte, crypto.PublicKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  isCA,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), &key.PublicKey
}

func TestCACertHash(t *testing.T) {
	t.Parallel()
	caPEM, pub := testCert(t, true)
	// Independent route to the same value: re-marshal the public key.
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spki)
	want := hex.EncodeToString(sum[:])

	got, err := CACertHash(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("CACertHash = %s, want %s", got, want)
	}
	// Leading text and a trailing key block do not change the answer.
	withNoise := append([]byte("# cluster CA\n"), caPEM...)
	withNoise = append(withNoise, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1}})...)
	if got2, err := CACertHash(withNoise); err != nil || got2 != want {
		t.Errorf("with surrounding text: %s, %v", got2, err)
	}
}

func TestCACertHashRejects(t *testing.T) {
	t.Parallel()
	leaf, _ := testCert(t, false)
	cases := map[string]struct {
		in   []byte
		want string
	}{
		"empty":    {nil, "no PEM block"},
		"not PEM":  {[]byte("hello"), "no PEM block"},
		"key":      {pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: []byte{1}}), `"RSA PRIVATE KEY"`},
		"bad DER":  {pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}}), "x509"},
		"not a CA": {leaf, "is not a CA"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := CACertHash(tc.in)
			if !errors.Is(err, ErrCACert) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrCACert mentioning %q", err, tc.want)
			}
		})
	}
}

func TestParseHash(t *testing.T) {
	t.Parallel()
	const h = "3463b7ab930d485bd0d27272c1f95582754053e09c8e9932ef43a13a7255de13"
	ok := []string{
		h,
		"sha256:" + h,
		"SHA256:" + strings.ToUpper(h),
		" sha256:" + h + "\n",
	}
	for _, in := range ok {
		got, err := ParseHash(in)
		if err != nil || got != h {
			t.Errorf("ParseHash(%q) = %q, %v; want %q", in, got, err, h)
		}
	}
	bad := map[string]string{
		"":                      "got 0 characters",
		"sha256:":               "got 0 characters",
		h[:63]:                  "got 63 characters",
		h + "0":                 "got 65 characters",
		"sha1:" + h[:59]:        "not hexadecimal",
		"sha512:" + h:           "got 71 characters",
		"sha256:sha256:" + h:    "got 71 characters",
		strings.Repeat("g", 64): "not hexadecimal",
		"sha256 " + h:           "got 71 characters",
	}
	for in, want := range bad {
		_, err := ParseHash(in)
		if !errors.Is(err, ErrHash) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHash(%q) err = %v, want ErrHash with %q", in, err, want)
		}
	}
}

func FuzzParseHash(f *testing.F) {
	f.Add("sha256:3463b7ab930d485bd0d27272c1f95582754053e09c8e9932ef43a13a7255de13")
	f.Add("3463B7AB930D485BD0D27272C1F95582754053E09C8E9932EF43A13A7255DE13")
	f.Add("sha256:")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseHash(s)
		if err != nil {
			if !errors.Is(err, ErrHash) {
				t.Fatalf("error without ErrHash: %v", err)
			}
			return
		}
		if len(got) != 64 || strings.ToLower(got) != got {
			t.Fatalf("ParseHash(%q) = %q: not 64 lowercase hex", s, got)
		}
		if _, err := hex.DecodeString(got); err != nil {
			t.Fatalf("ParseHash(%q) = %q: %v", s, got, err)
		}
		for _, again := range []string{got, "sha256:" + got} {
			if g, err := ParseHash(again); err != nil || g != got {
				t.Fatalf("not idempotent on %q: %q, %v", again, g, err)
			}
		}
	})
}

func FuzzCACertHash(f *testing.F) {
	ca, _ := testCert(f, true)
	leaf, _ := testCert(f, false)
	f.Add(ca)
	f.Add(leaf)
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := CACertHash(in)
		if err != nil {
			if !errors.Is(err, ErrCACert) {
				t.Fatalf("error without ErrCACert: %v", err)
			}
			return
		}
		if p, err := ParseHash(got); err != nil || p != got {
			t.Fatalf("CACertHash returned %q, which ParseHash does not keep: %v", got, err)
		}
	})
}
