package kubeconfig

import (
	"bytes"
	"testing"
)

// A payload's size: a CA, a client certificate and a key in PEM.
var benchPayload = bytes.Repeat([]byte("x"), 3000)

func BenchmarkSeal(b *testing.B) {
	r := newAgeKey(b).Recipient().String()
	for b.Loop() {
		if _, err := Seal(benchPayload, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	id := newAgeKey(b)
	sealed, err := Seal(benchPayload, id.Recipient().String())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Open(sealed, id); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseUsers(b *testing.B) {
	r := newAgeKey(b).Recipient().String()
	_, ssh := newSSHKey(b)
	list := "alice:" + r + ";bob:" + ssh + ";carol:" + r
	for b.Loop() {
		if u, _ := ParseUsers(list); len(u) != 3 {
			b.Fatal(u)
		}
	}
}
