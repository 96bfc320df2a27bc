package agent

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// printingExec plays a kubeadm init that prints the certificate key of the
// config it was given, as the real one does without
// --skip-certificate-key-print (cmd/kubeadm/app/cmd/phases/init/uploadcerts.go),
// in writes of split bytes, so the key reaches the pipe in pieces. Other
// commands go to the FakeExec.
type printingExec struct {
	*systemtest.FakeExec
	root   system.Root
	split  int
	output func(key, token string) (stdout, stderr string, code int)
	mu     sync.Mutex
	init   []system.Cmd
}

func (e *printingExec) Run(ctx context.Context, c system.Cmd) (system.Result, error) {
	if c.Name != "kubeadm" || len(c.Args) == 0 || c.Args[0] != "init" {
		return e.FakeExec.Run(ctx, c)
	}
	e.mu.Lock()
	e.init = append(e.init, c)
	e.mu.Unlock()
	b, err := e.root.ReadFile(InitConfigFile)
	if err != nil {
		return system.Result{}, err
	}
	key, err := kubeadm.InitConfigCertificateKey(b)
	if err != nil {
		return system.Result{}, err
	}
	stdout, stderr, code := e.output(key.Reveal(), tokenOf(b))
	out := system.NewOutput(c)
	for _, s := range []struct {
		w    io.Writer
		text string
	}{{out.Stdout(), stdout}, {out.Stderr(), stderr}} {
		for t := s.text; len(t) > 0; {
			n := min(e.split, len(t))
			_, _ = s.w.Write([]byte(t[:n]))
			t = t[n:]
		}
	}
	res := out.Result()
	return res, system.NewExitError(c, code, res)
}

// tokenOf finds the bootstrap token in a rendered init config.
func tokenOf(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "token: "); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// TestInitMasksTheCertificateKey runs a master whose kubeadm init prints
// the certificate key (and the join commands) and then fails: the agent
// asks kubeadm not to print it, and whatever kubeadm prints anyway, in
// whatever pieces, the key and the token reach no log, error, state.json,
// OneGate value or other file; only the init config kubeadm reads has it.
func TestInitMasksTheCertificateKey(t *testing.T) {
	uploadCerts := func(key string) string {
		return "[upload-certs] Storing the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" Namespace\n" +
			"[upload-certs] Using certificate key:\n" + key + "\n"
	}
	for _, tc := range []struct {
		name   string
		output func(key, token string) (string, string, int)
	}{
		{"killed right after printing the key", func(key, _ string) (string, string, int) {
			// Nothing on stderr: the error's tail and reason come from stdout.
			return uploadCerts(key), "", -1
		}},
		{"failed after printing the join commands", func(key, token string) (string, string, int) {
			return uploadCerts(key) + "\nYour Kubernetes control-plane has initialized successfully!\n\n" +
					"  kubeadm join 10.0.0.5:6443 --token " + token + " \\\n" +
					"\t--discovery-token-ca-cert-hash sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab \\\n" +
					"\t--control-plane --certificate-key " + key + "\n",
				"error execution phase show-join-command: failed to print join command\n", 1
		}},
	} {
		for _, split := range []int{1, 7, 33, 64, 4096} {
			t.Run(tc.name+"/writes of "+strconv.Itoa(split), func(t *testing.T) {
				og := newService(3, []int{3}, nil)
				h := newHarness(t, og)
				exec := &printingExec{
					FakeExec: (&systemtest.FakeExec{}).On("kubeadm version", systemtest.Reply{Stdout: "v1.36.3\n"}),
					root:     h.root, split: split, output: tc.output,
				}
				var logs strings.Builder
				var mu sync.Mutex
				deps := Deps{
					LoadSource: func(context.Context) (*Source, error) {
						return &Source{Creds: h.creds, Resolve: func(*onegate.VM, string) (Config, error) { return h.cfg, nil }}, nil
					},
					NewOneGate: func(OneGateConfig) (OneGate, error) { return og, nil },
					Kubeadm:    kubeadm.Runner{Exec: exec},
					Exec:       exec,
					Clock:      h.clock,
					Log:        slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
				}
				err := Bootstrap(t.Context(), Options{Root: h.root, Tunables: h.tun}, deps)
				if err == nil || len(exec.init) != 1 {
					t.Fatalf("want one failed init, got %d runs and %v", len(exec.init), err)
				}
				if args := strings.Join(exec.init[0].Args, " "); !strings.Contains(args, "--skip-certificate-key-print") {
					t.Errorf("kubeadm init without --skip-certificate-key-print: %s", args)
				}
				b, rerr := h.root.ReadFile(InitConfigFile)
				if rerr != nil {
					t.Fatal(rerr)
				}
				key, _ := kubeadm.InitConfigCertificateKey(b)
				secrets := map[string]string{"certificate key": key.Reveal(), "token": tokenOf(b)}
				if secrets["token"] == "" || key.IsZero() {
					t.Fatal("the init config has no token or key")
				}
				places := map[string]string{"the error": err.Error(), "the log": logs.String()}
				var values []string
				for _, u := range og.updates {
					for _, kv := range u {
						values = append(values, kv.Key+"="+kv.Value)
					}
				}
				places["OneGate"] = strings.Join(values, "\n")
				_ = filepath.WalkDir(string(h.root), func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() || p == h.root.Path(InitConfigFile) {
						return err
					}
					b, err := os.ReadFile(p)
					places[p] = string(b)
					return err
				})
				if _, ok := places[h.root.Path(state.StateFile)]; !ok {
					t.Error("no state.json written")
				}
				for where, text := range places {
					for what, s := range secrets {
						if strings.Contains(text, s) {
							// Never print the text: it holds the secret.
							t.Errorf("the %s is in %s", what, where)
						}
					}
				}
				if !strings.Contains(err.Error(), "kubeadm init") || !strings.Contains(err.Error(), "exit status") {
					t.Errorf("the error does not say kubeadm init failed: %s",
						vmcontext.Redact(err.Error(), key, vmcontext.NewSecret(secrets["token"])))
				}
			})
		}
	}
}
