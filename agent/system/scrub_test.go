package system

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

const (
	testKey   = "3f2a9c0b1d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd"
	testToken = "abcdef.0123456789abcdef"
	testPin   = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab"
)

// The output of a real `kubeadm init --upload-certs` without the skip
// flags, as cmd/kubeadm/app/cmd/phases/init (uploadcerts.go,
// showjoincommand.go) prints it.
const kubeadmInitOutput = "[upload-certs] Storing the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" Namespace\n" +
	"[upload-certs] Using certificate key:\n" + testKey + "\n" +
	"[mark-control-plane] Marking the node m1 as control-plane\n" +
	"  kubeadm join 10.0.0.5:6443 --token " + testToken + " \\\n" +
	"\t--discovery-token-ca-cert-hash " + testPin + " \\\n" +
	"\t--control-plane --certificate-key " + testKey + "\n"

func TestScrubOutput(t *testing.T) {
	t.Parallel()
	m := vmcontext.Mask
	for _, tc := range []struct{ name, in, want string }{
		{"key on its own line", "Using certificate key:\n" + testKey + "\n", "Using certificate key:\n" + m + "\n"},
		{"key in a flag", "--certificate-key " + testKey, "--certificate-key " + m},
		{"upper-case key", strings.ToUpper(testKey), m},
		{"longer hex run", testKey + "00", m},
		{"key glued to a word", "key:" + testKey + "x", "key:" + m + "x"},
		{"token", "--token " + testToken + " \\", "--token " + m + " \\"},
		{"token inside a word", "x" + testToken + "y", "x" + m + "y"},
		{"token whose secret runs into hex", "abcdef." + testKey, "abcdef." + m},
		{"CA pin kept", "--discovery-token-ca-cert-hash " + testPin, "--discovery-token-ca-cert-hash " + testPin},
		{"pin-like run too long", "sha256:" + testKey + "ab", "sha256:" + m},
		{"key after a pin", testPin + testKey, "sha256:" + m},
		{"63 hex digits kept", testKey[:63], testKey[:63]},
		{"short token-like kept", "abcdef.0123456789abcde", "abcdef.0123456789abcde"},
		{"upper-case token kept", "ABCDEF.0123456789ABCDEF", "ABCDEF.0123456789ABCDEF"},
		{"plain text", "[preflight] Running pre-flight checks\n", "[preflight] Running pre-flight checks\n"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := string(ScrubOutput([]byte(tc.in))); got != tc.want {
				t.Errorf("ScrubOutput(%q)\n = %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestScrubWriterEverySplit streams kubeadm's init output cut in two at
// every byte and in pieces of every size: the key and token never pass,
// the pin and the text around them do.
func TestScrubWriterEverySplit(t *testing.T) {
	t.Parallel()
	want := string(ScrubOutput([]byte(kubeadmInitOutput)))
	for _, s := range []string{testKey, testToken} {
		if strings.Contains(want, s) {
			t.Fatalf("ScrubOutput leaves %q in:\n%s", s, want)
		}
	}
	if !strings.Contains(want, testPin) || !strings.Contains(want, "Using certificate key:\n"+vmcontext.Mask+"\n") {
		t.Fatalf("ScrubOutput lost text around the secrets:\n%s", want)
	}
	check := func(what string, writes [][]byte) {
		t.Helper()
		var buf bytes.Buffer
		w := newScrubWriter(&buf)
		for _, p := range writes {
			if n, err := w.Write(p); n != len(p) || err != nil {
				t.Fatalf("%s: Write = %d, %v", what, n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != want {
			t.Fatalf("%s:\n%q\nwant\n%q", what, got, want)
		}
	}
	in := []byte(kubeadmInitOutput)
	for i := range in {
		check("cut at "+strconv.Itoa(i), [][]byte{in[:i], in[i:]})
	}
	for size := 1; size <= 80; size++ {
		var writes [][]byte
		for p := in; len(p) > 0; {
			n := min(size, len(p))
			writes, p = append(writes, p[:n]), p[n:]
		}
		check("pieces of "+strconv.Itoa(size), writes)
	}
}

// TestScrubWriterLongWord: a word longer than the writer holds back is
// masked whole, with the rest of it up to the next separator, so memory
// stays bounded and no key survives a forced cut.
func TestScrubWriterLongWord(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := &scrubWriter{w: &buf, limit: 100}
	long := strings.Repeat("0123456789", 12) + testKey[:40]
	for _, p := range []string{"before ", long[:110], long[110:], testKey[40:] + " after\n"} {
		_, _ = w.Write([]byte(p))
	}
	_ = w.Flush()
	if got, want := buf.String(), "before "+vmcontext.Mask+" after\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if cap(w.pending) > 1024 {
		t.Errorf("held back %d bytes", cap(w.pending))
	}
}

// TestOSExecScrubsAsItReads runs a process that prints a key and a token
// in halves, pausing between them, as kubeadm's writes may reach the pipe:
// neither is in the Result or the error.
func TestOSExecScrubsAsItReads(t *testing.T) {
	t.Parallel()
	script := `printf '[upload-certs] Using certificate key:\n%s' "$K1"; sleep 0.05; printf '%s\n' "$K2"
printf 'kubeadm join --token %s' "$T1" >&2; sleep 0.05; printf '%s\n' "$T2" >&2; exit 1`
	c := Cmd{
		Name: "sh", Args: []string{"-c", script},
		Env:   []string{"K1=" + testKey[:30], "K2=" + testKey[30:], "T1=" + testToken[:10], "T2=" + testToken[10:]},
		Scrub: true,
	}
	res, err := OSExec{}.Run(bounded(t), c)
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("want *ExitError, got %v", err)
	}
	all := string(res.Stdout) + string(res.Stderr) + err.Error() + ee.Brief()
	for _, s := range []string{testKey, testToken} {
		if strings.Contains(all, s) {
			t.Errorf("a secret passed: %q", all)
		}
	}
	if got := string(res.Stdout); got != "[upload-certs] Using certificate key:\n"+vmcontext.Mask+"\n" {
		t.Errorf("stdout = %q", got)
	}
	if !strings.Contains(err.Error(), "kubeadm join --token "+vmcontext.Mask) {
		t.Errorf("error lacks the masked output: %v", err)
	}
	// Without Scrub the output is the command's own (kubectl's, crictl's
	// digests and IDs stay intact).
	c.Scrub = false
	res, _ = OSExec{}.Run(bounded(t), c)
	if !strings.Contains(string(res.Stdout), testKey) {
		t.Errorf("unscrubbed stdout = %q", res.Stdout)
	}
}

var (
	leakedToken = regexp.MustCompile(`[a-z0-9]{6}\.[a-z0-9]{16}`)
	hexRun      = regexp.MustCompile(`[0-9a-fA-F]{64,}`)
)

// leaks returns what in out looks like a key or a token: any run of 64 or
// more hex digits other than a pin ("sha256:" and exactly 64 digits).
func leaks(out []byte) string {
	for _, m := range hexRun.FindAllIndex(out, -1) {
		if m[1]-m[0] == 64 && bytes.HasSuffix(out[:m[0]], []byte(pinPrefix)) {
			continue
		}
		return string(out[m[0]:m[1]])
	}
	return string(leakedToken.Find(out))
}

func FuzzScrubOutput(f *testing.F) {
	for _, s := range []string{
		kubeadmInitOutput, testKey, testToken, testPin, testPin + testKey,
		"abcdef." + testKey, "sha256:sha256:" + testKey, "abcdefg.0123456789abcdefghijkl.0123456789abcdef", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := ScrubOutput(in)
		if l := leaks(out); l != "" {
			t.Fatalf("ScrubOutput(%q) = %q: %q passed", in, out, l)
		}
		if again := ScrubOutput(out); !bytes.Equal(again, out) {
			t.Fatalf("ScrubOutput is not stable: %q then %q", out, again)
		}
	})
}

// FuzzRedactingWriter streams input cut at fuzzed boundaries through the
// scrubbing writer: whatever the cuts, nothing key- or token-shaped passes,
// and under the limit the result is what ScrubOutput makes of the whole.
func FuzzRedactingWriter(f *testing.F) {
	f.Add([]byte(kubeadmInitOutput), []byte{40, 3, 61, 7, 1, 90}, uint16(0))
	f.Add([]byte("Using certificate key:\n"+testKey+"\n"), []byte{30, 1}, uint16(0))
	f.Add([]byte("--token "+testToken), []byte{11}, uint16(0))
	f.Add([]byte(testPin), []byte{3, 4, 5}, uint16(0))
	f.Add([]byte(strings.Repeat("a", 70)+testKey), []byte{20, 50}, uint16(40))
	f.Fuzz(func(t *testing.T, in, cuts []byte, limit uint16) {
		var buf bytes.Buffer
		w := newScrubWriter(&buf)
		if limit > 0 {
			w.limit = int(limit)
		}
		rest := in
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if i < len(cuts) {
				n = min(int(cuts[i]), n)
			}
			if _, err := w.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out := buf.Bytes()
		if l := leaks(out); l != "" {
			t.Fatalf("streamed %q in cuts %v: %q passed in %q", in, cuts, l, out)
		}
		if len(in) <= w.limit { // never more held back than the limit
			if want := ScrubOutput(in); !bytes.Equal(out, want) {
				t.Fatalf("streamed %q in cuts %v:\n%q\nwhole:\n%q", in, cuts, out, want)
			}
		}
	})
}
