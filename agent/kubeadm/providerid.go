package kubeadm

import (
	"fmt"
	"strconv"
	"strings"
)

// A Node's spec.providerID names its VM: "one://<VMID>". The kubelet sets
// it at registration from --provider-id, and the API server refuses any
// change once it is set (pkg/apis/core/validation ValidateNodeUpdate:
// "node updates may not change providerID except from \"\" to valid"), so
// unlike the onekube.io/vm-id label a kubelet cannot move it to another
// VM afterwards. The serve loops map Nodes to VMs by it.
const (
	providerIDArg = "provider-id"
	// ProviderIDScheme prefixes every onekube provider ID.
	ProviderIDScheme = "one://"
	// maxVMIDDigits bounds a VM ID: oned's IDs are ints, and ten digits
	// cover every non-negative int32.
	maxVMIDDigits = 10
)

// ProviderID is the provider ID of VM vmid's Node.
func ProviderID(vmid int) string { return ProviderIDScheme + strconv.Itoa(vmid) }

// ParseProviderID reads a provider ID written by ProviderID, and only that
// spelling: "one://" then a VM ID in canonical decimal (no sign, no leading
// zero, no blanks). ok is false for a provider ID of another scheme (a
// Node onekube did not register); err is set for "one://" followed by
// anything but a VM ID.
func ParseProviderID(s string) (vmid int, ok bool, err error) {
	rest, found := strings.CutPrefix(s, ProviderIDScheme)
	if !found {
		return 0, false, nil
	}
	if rest == "" || len(rest) > maxVMIDDigits || (rest[0] == '0' && len(rest) > 1) {
		return 0, true, fmt.Errorf("provider ID %q: not %s<VM ID>", cut(s), ProviderIDScheme)
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return 0, true, fmt.Errorf("provider ID %q: not %s<VM ID>", cut(s), ProviderIDScheme)
		}
	}
	id, err := strconv.ParseInt(rest, 10, 32)
	if err != nil {
		return 0, true, fmt.Errorf("provider ID %q: VM ID out of range", cut(s))
	}
	return int(id), true, nil
}

// cut bounds a value quoted in an error: a Node's spec is anyone's text.
func cut(s string) string {
	const max = 24
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// checkProviderID accepts no provider ID or one of onekube's.
func checkProviderID(s string) error {
	if s == "" {
		return nil
	}
	if _, ok, err := ParseProviderID(s); !ok || err != nil {
		return fmt.Errorf("%w: ProviderID %q is not %s<VM ID>", ErrParams, cut(s), ProviderIDScheme)
	}
	return nil
}
