package status

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register/registertest"
)

// anyTokenPart finds, whatever the case, a token-shaped string or the
// secret half of the test's token.
var anyTokenPart = regexp.MustCompile(`(?i)[a-z0-9]{6}\.[a-z0-9]{16}|0123456789abcdef|q1w2e3r4t5y6u7i8`)

// TestStatusMasksServeKeys: what a master's serve publishes (its error,
// the waiting VMs, the Nodes without a VM, the token's expiry) is masked
// like every other published value, upper-cased tokens included, in the
// table and in --json.
func TestStatusMasksServeKeys(t *testing.T) {
	t.Parallel()
	_, od, f := fakes(t)
	upper := strings.ToUpper(token)
	od.VMs[49] = registertest.VMXML(registertest.VM{ID: 49, Name: "master_0_(service_12)", State: 3, LCM: 3, IP: "10.0.0.5",
		UserTemplate: map[string]string{
			vmcontext.KeyPubPhase: "done", vmcontext.KeyReady: "YES", vmcontext.KeyPubNodeName: "k8s-master",
			vmcontext.KeyPubMaster: "10.0.0.5", vmcontext.KeyPubPort: "6443", vmcontext.KeyPubToken: token,
			vmcontext.KeyPubServe:          "acting",
			vmcontext.KeyPubServeError:     "kubeadm token create printed " + token + " and " + upper,
			vmcontext.KeyPubWaiting:        "50 " + token,
			vmcontext.KeyPubNodesWithoutVM: "worker-9 0123456789abcdef Q1W2E3R4T5Y6U7I8",
			vmcontext.KeyPubTokenExpires:   token,
		}})
	od.VMs[50] = registertest.VMXML(registertest.VM{ID: 50, Name: "worker_0_(service_12)", State: 3, LCM: 3, IP: "10.0.0.6",
		UserTemplate: map[string]string{vmcontext.KeyPubPhase: "failed", vmcontext.KeyPubError: "join with " + upper + " refused"}})
	r, err := f.Fetch(context.Background(), 12)
	if err != nil {
		t.Fatal(err)
	}
	var table, js bytes.Buffer
	if err := WriteTable(&table, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"table": table.String(), "json": js.String()} {
		if m := anyTokenPart.FindString(out); m != "" {
			t.Errorf("%s shows %q:\n%s", name, m, out)
		}
	}
	if !strings.Contains(table.String(), "serve error: kubeadm token create printed "+vmcontext.Mask+" and "+vmcontext.Mask) ||
		!strings.Contains(table.String(), "join with "+vmcontext.Mask) {
		t.Errorf("masked text missing:\n%s", table.String())
	}
}

// TestRedactEveryField: every text field of a VM, whichever key or oned
// field it came from, is masked; a field added later cannot be forgotten.
func TestRedactEveryField(t *testing.T) {
	t.Parallel()
	const other = "Q1W2E3.ASDFGHJKL1234567"
	dirty := "x " + token + " " + strings.ToUpper(token) + " " + other + " 0123456789ABCDEF y"
	var v VM
	n := setStrings(reflect.ValueOf(&v).Elem(), dirty)
	if n < 15 {
		t.Fatalf("only %d string fields set", n)
	}
	got := v.redact(vmcontext.NewSecret(token))
	checkStrings(t, reflect.ValueOf(got), "VM")
}

func TestServiceRedact(t *testing.T) {
	t.Parallel()
	svc := Service{Name: strings.Repeat("k", MaxValue) + token, Roles: []Role{{Name: "w " + strings.ToUpper(token)}}}
	got := svc.redact()
	if len(got.Name) > MaxValue || !strings.HasSuffix(got.Name, CutMark) || got.Roles[0].Name != "w "+vmcontext.Mask || svc.Roles[0].Name == got.Roles[0].Name {
		t.Errorf("%.40q… / %q (the input's roles must stay as they were)", got.Name, got.Roles[0].Name)
	}
}

// setStrings sets every string field of the struct v, nested ones too, to
// s and counts them.
func setStrings(v reflect.Value, s string) int {
	n := 0
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString(s)
			n++
		case reflect.Struct:
			n += setStrings(f, s)
		}
	}
	return n
}

func checkStrings(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	for i := range v.NumField() {
		name := path + "." + v.Type().Field(i).Name
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			if m := anyTokenPart.FindString(f.String()); m != "" || strings.Contains(strings.ToUpper(f.String()), "ASDFGHJKL") {
				t.Errorf("%s = %q", name, f.String())
			}
		case reflect.Struct:
			checkStrings(t, f, name)
		}
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
