package state

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

func TestStoreRoundTrip(t *testing.T) {
	t.Parallel()
	st := Store{Root: system.Root(t.TempDir())}
	empty, err := st.Load()
	if err != nil || empty.VMID != 0 || len(empty.Completed) != 0 {
		t.Fatalf("missing file: %+v, %v", empty, err)
	}
	s := &State{VMID: 4, Role: "init", Token: vmcontext.NewSecret("abcdef.0123456789abcdef"),
		Published: map[string]string{vmcontext.KeyPubToken: "abcdef.0123456789abcdef", vmcontext.KeyReady: "YES"}}
	s.MarkAttempt("kubeadm-init")
	s.MarkDone("token")
	s.MarkDone("kubeadm-init")
	s.MarkDone("token")
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got.Token.Reveal() != "abcdef.0123456789abcdef" {
		t.Error("token not persisted")
	}
	if strings.Join(got.Completed, ",") != "token,kubeadm-init" || got.WasAttempted("kubeadm-init") {
		t.Errorf("completed %v, attempted %v", got.Completed, got.Attempted)
	}
	if m := got.Masked(); m[vmcontext.KeyPubToken] != vmcontext.Mask || m[vmcontext.KeyReady] != "YES" {
		t.Errorf("masked %v", m)
	}
	for p, mode := range map[string]os.FileMode{StateFile: 0o600, Dir: 0o700 | os.ModeDir} {
		fi, err := os.Stat(st.Root.Path(p))
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode(), err, mode)
		}
	}
	if ok, _ := st.Finished(); ok {
		t.Error("finished before Finish")
	}
	if err := st.Finish(time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := st.Finished(); !ok {
		t.Error("not finished after Finish")
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"garbage": "{",
		"newer":   `{"version": 99}`,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzParse: a state file may be truncated or edited by hand; Parse must
// not panic, and what it accepts must save and load back.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":1,"vmid":3,"role":"init","completed":["token"],"token":"abcdef.0123456789abcdef"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		st := Store{Root: system.Root(t.TempDir())}
		if err := st.Save(s); err != nil {
			t.Fatal(err)
		}
		back, err := st.Load()
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		if back.Token.Reveal() != s.Token.Reveal() || back.VMID != s.VMID {
			t.Fatalf("round trip changed the state")
		}
	})
}
