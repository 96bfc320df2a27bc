package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

func TestStatusMasksToken(t *testing.T) {
	t.Parallel()
	root := system.Root(t.TempDir())
	const tok = "abcdef.0123456789abcdef"
	st := &state.State{VMID: 3, Role: "init", Phase: PhaseDone, Completed: []string{"token"}, Token: vmcontext.NewSecret(tok),
		Published: map[string]string{vmcontext.KeyPubToken: tok, vmcontext.KeyPubMaster: "10.0.0.5"}, LastError: "old error"}
	if err := (state.Store{Root: root}).Save(st); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStatus(root)
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), js.String()} {
		if strings.Contains(out, tok) {
			t.Errorf("status leaks the token:\n%s", out)
		}
		for _, want := range []string{"init", "10.0.0.5", "old error", PhaseDone} {
			if !strings.Contains(out, want) {
				t.Errorf("status lacks %q:\n%s", want, out)
			}
		}
	}
	var decoded Status
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || decoded.VMID != 3 || decoded.Bootstrapped {
		t.Errorf("json %+v, %v", decoded, err)
	}
	if !strings.Contains(text.String(), "bootstrapped: no") {
		t.Errorf("text:\n%s", text.String())
	}
}

func TestStatusEmpty(t *testing.T) {
	t.Parallel()
	s, err := ReadStatus(system.Root(t.TempDir()))
	if err != nil || s.Bootstrapped || s.Role != "" {
		t.Fatalf("%+v, %v", s, err)
	}
}

// TestStatusMasksTokenPartsFromOlderFiles: an error an older agent saved
// with only the whole token masked shows no part of it either.
func TestStatusMasksTokenPartsFromOlderFiles(t *testing.T) {
	t.Parallel()
	root := system.Root(t.TempDir())
	const tok = "abcdef.0123456789abcdef"
	v1 := `{"version":1,"vmid":3,"role":"init","token":"` + tok + `","last_error":"kubeadm: secret 0123456789abcdef of bootstrap-token-abcdef rejected"}`
	if err := root.WriteFile(state.StateFile, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := ReadStatus(root)
	if err != nil {
		t.Fatal(err)
	}
	var js, txt strings.Builder
	_ = st.WriteJSON(&js)
	_ = st.WriteText(&txt)
	for _, out := range []string{js.String(), txt.String()} {
		if strings.Contains(out, "0123456789abcdef") || strings.Contains(out, "abcdef") || !strings.Contains(out, "rejected") {
			t.Errorf("status:\n%s", out)
		}
	}
}

// TestStatusMasksEveryValue: a published value or an error holding a token
// this node does not know (an older one, another cluster's), or an
// upper-cased one, shows no part of it in text or JSON.
func TestStatusMasksEveryValue(t *testing.T) {
	t.Parallel()
	root := system.Root(t.TempDir())
	const tok = "abcdef.0123456789abcdef"
	st := &state.State{VMID: 3, Role: "worker", Phase: PhaseFailed, Token: vmcontext.NewSecret(tok),
		Published: map[string]string{
			vmcontext.KeyPubError:    "join with ABCDEF.0123456789ABCDEF failed (old qwerty.asdfghjkl1234567)",
			vmcontext.KeyPubNodeName: "w-1 Q1W2E3R4T5Y6U7I8",
		},
		LastError: "kubeadm join --token ABCDEF.0123456789ABCDEF: secret q1w2e3r4t5y6u7i8 rejected"}
	if err := (state.Store{Root: root}).Save(st); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStatus(root)
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), js.String()} {
		low := strings.ToLower(out)
		for _, part := range []string{"0123456789abcdef", "asdfghjkl1234567", "q1w2e3r4t5y6u7i8", "qwerty."} {
			if strings.Contains(low, part) {
				t.Errorf("status shows %q:\n%s", part, out)
			}
		}
		if !strings.Contains(out, "rejected") || !strings.Contains(out, "w-1") {
			t.Errorf("status lost its text:\n%s", out)
		}
	}
}
