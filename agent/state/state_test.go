package state

import (
	"errors"
	"fmt"
	"os"
	"slices"
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
	if !got.Token.IsZero() {
		t.Error("token persisted; format 2 keeps no secret")
	}
	if b, _ := st.Root.ReadFile(StateFile); strings.Contains(string(b), "0123456789abcdef") || !strings.Contains(string(b), `"version": 2`) {
		t.Errorf("state file:\n%s", b)
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
		"array":   "[]",
		"newer":   `{"version": 99}`,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Parse([]byte("{")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbage: %v, want ErrCorrupt", err)
	}
}

// TestMigrateV1: a version 1 file's token is read once (for a rerun that
// needs it) and never written back.
func TestMigrateV1(t *testing.T) {
	t.Parallel()
	st := Store{Root: system.Root(t.TempDir())}
	v1 := `{"version":1,"vmid":3,"role":"init","completed":["token","render-init","kubeadm-init"],"token":"abcdef.0123456789abcdef","last_error":"x"}`
	if err := st.Root.WriteFile(StateFile, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if s.VMID != 3 || !s.Done("kubeadm-init") || s.Token.Reveal() != "abcdef.0123456789abcdef" || s.LastError != "x" {
		t.Fatalf("migrated %+v", s)
	}
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
	if b, _ := st.Root.ReadFile(StateFile); strings.Contains(string(b), "abcdef") {
		t.Errorf("token written back:\n%s", b)
	}
}

func TestEmptyStates(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`null`, `{}`, `{"version":2,"vmid":3,"role":"init","completed":[]}`, `{"vmid":3,"phase":"done"}`} {
		s, err := Parse([]byte(in))
		if err != nil || !s.Empty() {
			t.Errorf("%s: %+v, %v; want an empty record", in, s, err)
		}
	}
	s := &State{VMID: 3, Role: "init", Completed: []string{"token"}, LastError: "x"}
	if s.Empty() {
		t.Error("a record with a completed phase is empty")
	}
	s.Restart()
	if !s.Empty() || s.VMID != 3 || s.Role != "init" || s.LastError != "" {
		t.Errorf("after Restart: %+v", s)
	}
}

func TestSetAside(t *testing.T) {
	t.Parallel()
	st := Store{Root: system.Root(t.TempDir())}
	if err := st.Root.WriteFile(StateFile, []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load = %v", err)
	}
	name, err := st.SetAside(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil || name != StateFile+".corrupt-20260102T030405Z" {
		t.Fatalf("SetAside = %q, %v", name, err)
	}
	if b, _ := st.Root.ReadFile(name); string(b) != "{garbage" {
		t.Error("the corrupt file was not kept")
	}
	if s, err := st.Load(); err != nil || !s.Empty() {
		t.Errorf("after SetAside: %+v, %v", s, err)
	}
}

func TestLock(t *testing.T) {
	t.Parallel()
	st := Store{Root: system.Root(t.TempDir())}
	unlock, err := st.Lock()
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Lock()
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("PID %d", os.Getpid())) {
		t.Errorf("second lock: %v", err)
	}
	unlock()
	again, err := st.Lock()
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again()
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
		if back.VMID != s.VMID || !slices.Equal(back.Completed, s.Completed) || !back.Token.IsZero() {
			t.Fatalf("round trip changed the state")
		}
	})
}
