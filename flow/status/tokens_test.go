package status

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register/registertest"
)

func TestMaskTokens(t *testing.T) {
	t.Parallel()
	known := tokenSecrets(vmcontext.NewSecret(token))
	M := vmcontext.Mask
	cases := []struct {
		name, in string
		halves   bool
		want     string
	}{
		{"known whole", "kubeadm join --token " + token, false, "kubeadm join --token " + M},
		{"known half alone", "secret 0123456789abcdef leaked", false, "secret " + M + " leaked"},
		{"known half embedded", "xx0123456789abcdefyy", false, "xx" + M + "yy"},
		{"other token", "token zyxwvu.9876543210zyxwvu expired", false, "token " + M + " expired"},
		{"other token in a word", "Xqwerty.0000000000aaaaaaZ", false, "X" + M + "Z"},
		{"other half alone", "secret=9876543210zyxwvu; retry", true, "secret=" + M + "; retry"},
		{"other half letters only", "half abcdefghijklmnop", true, "half " + M},
		{"half next to upper and _", "A9876543210zyxwvu_B", true, "A" + M + "_B"},
		{"halves off for names", "prod16characters-42", false, "prod16characters-42"},
		{"shorter and longer runs stay", "sha256:" + strings.Repeat("ab", 32) + " 15chars15chars1 17chars17chars17c", true, "sha256:" + strings.Repeat("ab", 32) + " 15chars15chars1 17chars17chars17c"},
		{"kubeadm message", `[discovery] failed to request cluster-info: token id "abcdef" is invalid for this cluster or it has expired. Use "kubeadm token create"`, true, `[discovery] failed to request cluster-info: token id "abcdef" is invalid for this cluster or it has expired. Use "kubeadm token create"`},
		{"empty", "", true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := maskTokens(tc.in, tc.halves, known...); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestStatusMasksTokenParts: a worker's error quoting another token, the
// known token's secret half on its own, and a bare 16-character secret
// half reach neither the table nor --json.
func TestStatusMasksTokenParts(t *testing.T) {
	t.Parallel()
	_, od, f := fakes(t)
	const other = "qwerty.asdfghjkl1234567"
	od.VMs[50] = registertest.VMXML(registertest.VM{ID: 50, Name: "worker_0_(service_12)", State: 3, LCM: 3, IP: "10.0.0.6",
		UserTemplate: map[string]string{vmcontext.KeyPubPhase: "failed",
			vmcontext.KeyPubError: "join failed: half 0123456789abcdef, old " + other + ", bare zxcvbnm987654321"}})
	r, err := f.Fetch(context.Background(), 12)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteTable(&out, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&out, r); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "%v", r.Reasons)
	for _, secret := range []string{"0123456789abcdef", "asdfghjkl1234567", "zxcvbnm987654321", "qwerty."} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("%q in output:\n%s", secret, out.String())
		}
	}
	if !strings.Contains(out.String(), "join failed: half "+vmcontext.Mask+", old "+vmcontext.Mask+", bare "+vmcontext.Mask) {
		t.Errorf("masked error missing:\n%s", out.String())
	}
}

func FuzzMaskTokens(f *testing.F) {
	for _, s := range []string{"", token, "a 0123456789abcdef b", "xxabcdef.0123456789abcdefyy", "é0123456789abcdefé"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, halves bool) {
		got := maskTokens(s, halves, tokenSecrets(vmcontext.NewSecret(token))...)
		if bootstrapToken.MatchString(got) || strings.Contains(got, "0123456789abcdef") {
			t.Fatalf("a token survived: %q -> %q", s, got)
		}
		if !halves && !strings.Contains(s, "0123456789abcdef") && !bootstrapToken.MatchString(s) && got != s {
			t.Fatalf("text without a token changed: %q -> %q", s, got)
		}
	})
}
