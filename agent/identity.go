package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// A node's identity has two halves, checked on every boot (issue 22):
//   - the kubelet registers with --provider-id=one://<VMID>, the OpenNebula
//     cloud provider's scheme (kubeadm.ProviderID, in every init, join and
//     control-plane join the agent renders), so a Node names its VM;
//   - the VM's OpenNebula name is the node name, so OpenNebula's tools
//     (the OpenNebula CSI driver finds a node's VM by name) and people see
//     the same name. The VM renames itself through OneGate
//     (POST /vms/<own ID>/action rename), only when the names differ.
//
// Neither is fatal: a hardened onegate-server.conf (:action_by_id: false)
// refuses the rename, and a Node registered before the provider ID keeps
// none (the API server lets it be set only once). Both are logged as
// warnings with the way out.

// KubeletFlagsFile is where kubeadm writes the kubelet's flags
// (cmd/kubeadm/app/constants KubeletRunDirectory + KubeletEnvFileName).
const KubeletFlagsFile = "/var/lib/kubelet/kubeadm-flags.env"

// nameVM renames VM vmid (this VM) to node when its OpenNebula name
// (current) differs. og must also be a gate.Actor; a client that is not
// one cannot rename. It reports whether it renamed.
func nameVM(ctx context.Context, og OneGate, vmid int, current, node string) (bool, error) {
	if node == "" || current == node {
		return false, nil
	}
	a, ok := og.(gate.Actor)
	if !ok {
		return false, errors.New("this OneGate client cannot perform VM actions")
	}
	if err := a.Action(ctx, vmid, onegate.ActionRename, map[string]string{onegate.ParamName: node}); err != nil {
		return false, fmt.Errorf("renaming VM %d to its node name %s through OneGate: %w", vmid, node, err)
	}
	return true, nil
}

// checkKubeletProviderID reads the kubelet's flags kubeadm wrote and
// checks they carry this VM's provider ID. No file (kubeadm has not run
// yet) is no error.
func checkKubeletProviderID(root system.Root, vmid int) error {
	b, err := root.ReadFile(KubeletFlagsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", KubeletFlagsFile, err)
	}
	want := kubeadm.ProviderID(vmid)
	got, found := providerIDFlag(b)
	switch {
	case !found:
		return fmt.Errorf("%s has no --provider-id: the kubelet registered without %s (a node kubeadm joined before onekube set it; the API server lets spec.providerID be set only once, so rejoin the node to get it)", KubeletFlagsFile, want)
	case got != want:
		return fmt.Errorf("%s has --provider-id=%s, but this is VM %d (%s): a disk that belonged to another VM", KubeletFlagsFile, truncateID(got), vmid, want)
	}
	return nil
}

// providerIDFlag finds --provider-id=<value> in KUBELET_KUBEADM_ARGS.
func providerIDFlag(env []byte) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(env))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		v, ok := strings.CutPrefix(line, "KUBELET_KUBEADM_ARGS=")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(strings.Trim(v, `"'`)) {
			if id, ok := strings.CutPrefix(f, "--provider-id="); ok {
				return id, true
			}
		}
	}
	return "", false
}

func truncateID(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// checkIdentity is the identity check of a bootstrap run: at its end, or
// for a worker without a master hint in its start-up window. The VM
// document discovery read gives the current name, so it costs no read.
func checkIdentity(ctx context.Context, d Data) {
	n := d.Node()
	n.IdentityChecked = true
	current := ""
	if n.Self != nil {
		current = n.Self.Name
	}
	reportIdentity(ctx, d.Log(), d.OneGate(), d.Root(), n.VMID, current, d.Config().NodeName)
}

// reportIdentity renames the VM if needed and checks the provider ID,
// logging what it did and warning about what it could not.
func reportIdentity(ctx context.Context, log *slog.Logger, og OneGate, root system.Root, vmid int, current, node string) {
	if renamed, err := nameVM(ctx, og, vmid, current, node); err != nil {
		log.Warn("the VM keeps its OpenNebula name; OpenNebula's tools will not find the node by name",
			"vm_name", current, "node", node, "error", err)
	} else if renamed {
		log.Info("VM renamed to its node name", "was", current, "now", node)
	}
	if err := checkKubeletProviderID(root, vmid); err != nil {
		log.Warn("the kubelet's provider ID is not this VM's", "error", err)
	}
}

// identityAtBoot is the check on a boot after bootstrap finished (the
// agent then has nothing else to do): one GET /vm for the current name,
// the node name from the state file. It never fails the boot.
func identityAtBoot(ctx context.Context, opts Options, deps Deps, log *slog.Logger) {
	st, err := state.Store{Root: opts.Root}.Load()
	if err != nil {
		log.Warn("identity not checked: reading the state", "error", err)
		return
	}
	node := st.Published[vmcontext.KeyPubNodeName]
	src, err := deps.LoadSource(ctx)
	if err != nil {
		log.Warn("identity not checked: reading the VM context", "error", err)
		return
	}
	og, err := deps.NewOneGate(OneGateConfig{Creds: src.Creds, CAFile: opts.OneGateCAFile, CAPEM: src.OneGateCA})
	if err != nil {
		log.Warn("identity not checked: connecting to OneGate", "error", err)
		return
	}
	vm, err := og.GetVM(ctx)
	if err != nil {
		log.Warn("identity not checked: reading this VM from OneGate", "error", err)
		return
	}
	reportIdentity(ctx, log, og, opts.Root, vm.ID, vm.Name, node)
}
