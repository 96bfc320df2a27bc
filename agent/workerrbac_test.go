package agent

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
)

// The initializing master grants the worker token group its join RBAC
// (kubeadm.WorkerJoinRBAC, the manifest serve repairs later) before it
// publishes kubeadm init's token: a worker joining in the seconds before
// onekubed serve runs must not get 403 on kubeadm-config. With or without
// a CNI, and before the CNI's own apply.
func TestInitMasterGrantsWorkerJoinBeforePublish(t *testing.T) {
	for _, cni := range []string{CNINone, "flannel"} {
		t.Run(cni, func(t *testing.T) {
			og := newService(3, []int{3}, []int{5})
			h := newHarness(t, og)
			h.cfg.CNI = cni
			if cni != CNINone {
				if err := h.root.WriteFile("/usr/share/onekube/cni/"+cni+".yaml", testManifest(t, cni), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var applied []string
			h.exec.Replies = nil // record every kubectl, the harness's default one too
			h.exec.On("kubectl", systemtest.Reply{Do: func(c system.Cmd) error {
				if og.ut(3, vmcontext.KeyReady) == "YES" || og.ut(3, vmcontext.KeyPubToken) != "" {
					t.Errorf("kubectl %v ran after the master published its join data", c.Args)
				}
				if bytes.Equal(c.Stdin, kubeadm.WorkerJoinRBAC) {
					applied = append(applied, "worker-rbac "+strings.Join(c.Args, " "))
				} else {
					applied = append(applied, "other "+strings.Join(c.Args, " "))
				}
				return nil
			}})
			if err := h.run(); err != nil {
				t.Fatal(err)
			}
			if og.ut(3, vmcontext.KeyReady) != "YES" {
				t.Fatal("master did not publish")
			}
			if len(applied) == 0 || applied[0] != "worker-rbac --kubeconfig "+h.root.Path(AdminConfFile)+" apply -f -" {
				t.Fatalf("kubectl runs %q, want the worker join RBAC applied first, from stdin with admin.conf", applied)
			}
			if want := map[string]int{CNINone: 1, "flannel": 2}[cni]; len(applied) != want {
				t.Errorf("kubectl runs %q, want %d", applied, want)
			}
		})
	}
}

// A fresh control plane may refuse the apply for a moment: it is retried,
// like the CNI's; a kubectl that keeps failing fails the phase, unpublished.
func TestGrantWorkerJoinRetries(t *testing.T) {
	t.Parallel()
	exec := (&systemtest.FakeExec{}).On("kubectl", systemtest.Reply{Code: 1, Stderr: "connection refused"}, systemtest.Reply{})
	d := cniData(t, CNINone, "10.244.0.0/16", exec)
	if err := grantWorkerJoin(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if exec.Count("kubectl") != 2 {
		t.Errorf("kubectl ran %d times, want 2", exec.Count("kubectl"))
	}

	exec = (&systemtest.FakeExec{}).On("kubectl", systemtest.Reply{Do: func(system.Cmd) error {
		return errors.New("kubectl: killed after its deadline, context deadline exceeded")
	}})
	d = cniData(t, CNINone, "10.244.0.0/16", exec)
	if err := grantWorkerJoin(t.Context(), d); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err = %v", err)
	}
}
