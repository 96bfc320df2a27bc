package system

import (
	"bytes"
	"io"
	"regexp"

	vmcontext "github.com/onekube/onekube/context"
)

// What kubeadm may print that must not leave the process:
//   - a certificate key, 64 hex digits: `kubeadm init --upload-certs` and
//     `kubeadm init phase upload-certs --upload-certs` print
//     "[upload-certs] Using certificate key:\n<key>" unless
//     --skip-certificate-key-print (cmd/kubeadm/app/cmd/phases/init/uploadcerts.go),
//     and the join command init prints ends in --certificate-key
//     (cmd/kubeadm/app/cmd/util/join.go);
//   - a bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}
//     (k8s.io/cluster-bootstrap/token/api BootstrapTokenPattern), in that
//     join command unless --skip-token-print.
//
// Masking by shape, not by value, catches a key kubeadm made up itself and
// one the caller never learned (a master's own init key).
var (
	keyRun  = regexp.MustCompile(`[0-9a-fA-F]{64,}`)
	tokenRE = regexp.MustCompile(`[a-z0-9]{6}\.[a-z0-9]{16}`)
)

// pinPrefix marks a CA public key pin ("sha256:" and 64 hex digits), which
// kubeadm prints in join commands and in a pin mismatch ("none of the
// public keys ... are pinned"): public, and what an operator needs to see.
const pinPrefix = "sha256:"

// ScrubOutput returns b with every certificate key and bootstrap token
// masked: any run of 64 or more hex digits, except one of exactly 64 right
// after "sha256:", and any token-shaped text. Runs go first, so a token's
// secret that is the start of a longer hex run is masked with the run.
func ScrubOutput(b []byte) []byte {
	var out []byte
	last := 0
	for _, m := range keyRun.FindAllIndex(b, -1) {
		if m[1]-m[0] == 64 && bytes.HasSuffix(b[:m[0]], []byte(pinPrefix)) {
			continue
		}
		out = append(append(out, b[last:m[0]]...), vmcontext.Mask...)
		last = m[1]
	}
	out = append(out, b[last:]...)
	return tokenRE.ReplaceAllLiteral(out, []byte(vmcontext.Mask))
}

// maxPending bounds what scrubWriter holds back waiting for the end of a
// word: far more than any line kubeadm prints.
const maxPending = 64 << 10

// scrubWriter masks keys and tokens in a stream as it is written, however
// the writes split it: a pipe may hand over "…certificate key:\n3f2a" and
// the rest of the key in the next read. It passes on text up to the last
// byte that cannot be inside a key, a token or a pin ("sha256:" and its
// hex), and holds back the word after it. Scrubbing at such cuts masks
// exactly what ScrubOutput masks in the whole stream.
type scrubWriter struct {
	w       io.Writer
	pending []byte
	limit   int
	// dropping is set when a word outgrew limit: it was masked whole and
	// the rest of it, up to the next separator, is dropped.
	dropping bool
}

func newScrubWriter(w io.Writer) *scrubWriter { return &scrubWriter{w: w, limit: maxPending} }

// wordByte reports whether c can be part of a key, a token or a pin.
func wordByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == ':'
}

func (s *scrubWriter) Write(p []byte) (int, error) {
	n := len(p)
	if s.dropping {
		i := 0
		for i < len(p) && wordByte(p[i]) {
			i++
		}
		if i == len(p) {
			return n, nil
		}
		p, s.dropping = p[i:], false
	}
	// What is held back is one word, so only p can hold a separator.
	held := len(s.pending)
	s.pending = append(s.pending, p...)
	cut := len(s.pending)
	for cut > held && wordByte(s.pending[cut-1]) {
		cut--
	}
	if cut > held {
		if _, err := s.w.Write(ScrubOutput(s.pending[:cut])); err != nil {
			return n, err
		}
		s.pending = append(s.pending[:0], s.pending[cut:]...)
	}
	if len(s.pending) > s.limit {
		// One word this long is no kubeadm message: mask all of it rather
		// than hold more or risk cutting a key in two.
		s.pending, s.dropping = s.pending[:0], true
		if _, err := s.w.Write([]byte(vmcontext.Mask)); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Flush scrubs and passes on the word held back, at the end of the stream.
func (s *scrubWriter) Flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	_, err := s.w.Write(ScrubOutput(s.pending))
	s.pending = s.pending[:0]
	return err
}
