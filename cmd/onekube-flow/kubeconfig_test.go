package main

import (
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

func TestKubeconfigUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"kubeconfig"},
		{"kubeconfig", "a", "b"},
		{"kubeconfig", "lab", "--role", "admin"},
		{"kubeconfig", "lab", "--ttl", "30s"},
		{"kubeconfig", "lab", "--ttl", "169h"},
		{"kubeconfig", "lab", "--ttl", "90.5s"},
		{"kubeconfig", "lab", "--timeout", "0"},
	} {
		code, out, errs := runCLI(t, "", nil, args...)
		if code != exitUsage || out != "" || errs == "" {
			t.Errorf("%v: code %d\n%s%s", args, code, out, errs)
		}
	}
}

// A cluster whose master has not reported READY is "not ready": exit 3,
// as status says "in progress", and no request is written. The first run
// made the key and stored its public half in the OpenNebula user.
func TestKubeconfigNotReady(t *testing.T) {
	t.Parallel()
	e := newStatusEnv(t)
	e.od.VMs[49] = statusVM(49, "kubeadm-init", false, nil)
	env := map[string]string{}
	for k, v := range e.env {
		env[k] = v
	}
	code, out, errs := runCLI(t, "", env, "kubeconfig", "lab", "--timeout", "5s")
	if code != exitInProgress || out != "" || !strings.Contains(errs, "no master of service 12 (lab) is ready") {
		t.Fatalf("code %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "created your key") || !strings.Contains(e.od.UserTemplate[vmcontext.UserKeyAgeRecipient], "age1") {
		t.Errorf("key not made or not stored: %v\n%s", e.od.UserTemplate, errs)
	}
	for _, c := range e.od.Calls {
		if c.Method == "one.vm.update" {
			t.Errorf("a request was written: %v", c)
		}
	}
}
