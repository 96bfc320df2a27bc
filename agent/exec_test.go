package agent

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// TestMasterCommandLines runs a master through the real kubeadm.Runner with
// a scripted Exec: kubeadm is driven only with --config, the token never
// appears on a command line, and a rerun after success runs nothing.
func TestMasterCommandLines(t *testing.T) {
	og := newService(3, []int{3}, nil)
	h := newHarness(t, og)
	h.cfg.CNI = "flannel"
	ca, _ := testCA(t)
	exec := (&systemtest.FakeExec{}).
		On("kubeadm version", systemtest.Reply{Stdout: "v1.37.2\n"}).
		On("kubeadm init", systemtest.Reply{Do: func(system.Cmd) error { return h.root.WriteFile(CACertFile, ca, 0o644) }}).
		On("kubectl", systemtest.Reply{})
	if err := h.root.WriteFile("/usr/share/onekube/cni/flannel.yaml", testManifest(t, "flannel"), 0o644); err != nil {
		t.Fatal(err)
	}
	deps := Deps{
		LoadSource: func(context.Context) (*Source, error) {
			return &Source{Creds: h.creds, Resolve: func(*onegate.VM, string) (Config, error) { return h.cfg, nil }}, nil
		},
		NewOneGate: func(OneGateConfig) (OneGate, error) { return og, nil },
		Kubeadm:    kubeadm.Runner{Exec: exec},
		Exec:       exec,
		Clock:      h.clock,
		Log:        slog.New(slog.DiscardHandler),
	}
	if err := Bootstrap(t.Context(), Options{Root: h.root, Tunables: h.tun}, deps); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range exec.Calls {
		lines = append(lines, strings.Join(append([]string{c.Name}, c.Args...), " "))
	}
	want := []string{
		"kubeadm version -o short",
		"kubeadm init --config " + h.root.Path(InitConfigFile) + " --upload-certs --skip-token-print --skip-certificate-key-print",
		"kubectl --kubeconfig " + h.root.Path(AdminConfFile) + " apply -f -",
		"kubectl --kubeconfig " + h.root.Path(AdminConfFile) + " apply -f " + h.root.Path("/var/lib/onekube/cni-flannel.yaml"),
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	tok := og.ut(3, vmcontext.KeyPubToken)
	if !kubeadm.ValidToken(tok) {
		t.Fatalf("published token %q", "<malformed>")
	}
	if strings.Contains(strings.Join(lines, " "), tok) {
		t.Error("the token is on a command line")
	}
	st, err := state.Store{Root: h.root}.Load()
	if err != nil || !st.Token.IsZero() || st.Published[vmcontext.KeyPubToken] != vmcontext.Mask {
		// On failure the stored value may be the token itself: say only
		// whether it is masked.
		t.Errorf("state: token kept %v, published value masked %v, %v", !st.Token.IsZero(), st.Published[vmcontext.KeyPubToken] == vmcontext.Mask, err)
	}
	if b, _ := h.root.ReadFile(state.StateFile); strings.Contains(string(b), tok) {
		t.Error("state.json holds the token")
	}
	if err := Bootstrap(t.Context(), Options{Root: h.root, Tunables: h.tun}, deps); err != nil || len(exec.Calls) != len(want) {
		t.Errorf("rerun: %v, %d more commands", err, len(exec.Calls)-len(want))
	}
}
