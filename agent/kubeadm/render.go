package kubeadm

import (
	"bytes"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstraptokenv1 "k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1"
	"sigs.k8s.io/yaml"

	vmcontext "github.com/onekube/onekube/context"
)

// Bootstrap token settings, written out so the config says what the token
// may do. The group is not kubeadm's default-node-token: kubeadm binds
// that group to reading the kubeadm-certs Secret (phases/copycerts/
// copycerts.go, the upload-certs Role), and the token every worker is
// handed is readable by every VM of the service. WorkerTokenGroup gets
// only what a worker's join needs (agent/serve workerrbac.go); a
// control-plane join's own token keeps kubeadm's group.
const (
	tokenDescription = "onekube: joins nodes to this cluster"
	tokenGroup       = WorkerTokenGroup
)

// WorkerTokenGroup is the extra group of every worker join token onekube
// makes (kubeadm init's and serve's).
const WorkerTokenGroup = "system:bootstrappers:onekube:worker"

// KubeadmTokenGroup is kubeadm's default bootstrap token group
// (constants.NodeBootstrapTokenAuthGroup): the one that may read
// kubeadm-certs, for control-plane joins only.
const KubeadmTokenGroup = "system:bootstrappers:kubeadm:default-node-token"

var tokenUsages = []string{"signing", "authentication"}

// kubelet flag pinning the node's address; without it a multi-NIC VM may
// register the wrong interface.
const nodeIPArg = "node-ip"

// kubelet flag setting the Node's labels at registration. NodeRestriction
// lets a kubelet set labels on its own Node unless their prefix is
// kubernetes.io or k8s.io (outside an allow-list), so onekube.io/ is free.
const nodeLabelsArg = "node-labels"

// LabelVMID is the label every onekube Node carries with its VM's
// OpenNebula ID: the serve loops map Nodes to VMs by it, never by name.
const LabelVMID = "onekube.io/vm-id"

// kubeletArgs are the kubelet flags for a node: its address, when set its
// labels as "k=v,k2=v2" in key order (a stable file), and when set its
// provider ID (providerid.go).
func kubeletArgs(ip netip.Addr, labels map[string]string, providerID string) [][2]string {
	args := [][2]string{{nodeIPArg, ip.String()}}
	if len(labels) > 0 {
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + labels[k]
		}
		args = append(args, [2]string{nodeLabelsArg, strings.Join(parts, ",")})
	}
	if providerID != "" {
		args = append(args, [2]string{providerIDArg, providerID})
	}
	return args
}

// bootstrapToken builds the one token init creates. The token was checked
// already, so the conversion cannot fail.
func bootstrapToken(tok vmcontext.Secret, ttl time.Duration) bootstraptokenv1.BootstrapToken {
	bts, err := bootstraptokenv1.NewBootstrapTokenString(tok.Reveal())
	if err != nil {
		panic(fmt.Sprintf("kubeadm: checked token rejected by kubeadm's parser: %v", err))
	}
	return bootstraptokenv1.BootstrapToken{
		Token:       bts,
		Description: tokenDescription,
		TTL:         &metav1.Duration{Duration: ttl},
		Usages:      tokenUsages,
		Groups:      []string{tokenGroup},
	}
}

// marshalDocs renders each value as a YAML document and joins them with
// "---". sigs.k8s.io/yaml goes through the types' JSON tags, so omitempty
// fields the caller did not set stay out of the file: a kubeadm older than
// these types never meets a field it does not know (its decoding is strict).
func marshalDocs(docs ...any) ([]byte, error) {
	var b bytes.Buffer
	for i, d := range docs {
		out, err := yaml.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("marshalling %T: %w", d, err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(out)
	}
	return b.Bytes(), nil
}

// prefixString renders an optional prefix; zero means "leave kubeadm's default".
func prefixString(p netip.Prefix) string {
	if !p.IsValid() {
		return ""
	}
	return p.String()
}

// int32Port converts a checked port.
func int32Port(p int) int32 { return int32(p) } //nolint:gosec // checked by checkPort

// taints maps the taint choice: nil lets kubeadm apply its control-plane
// taint (it renders as "taints: null", which kubeadm reads as unset; the field
// has no omitempty); an empty slice asks for no taints at all.
func taints(keep bool) []corev1.Taint {
	if keep {
		return nil
	}
	return []corev1.Taint{}
}
