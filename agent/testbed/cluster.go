package testbed

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a control plane the bed initialized with kubeadm directly
// (without the agent), for tests of the bed itself and of later work (HA,
// token refresh, node removal) that needs a cluster to start from.
type Cluster struct {
	bed      *Bed
	First    *VM
	Endpoint string // host:port of the API server workers join
	Token    string // the bootstrap token init created
	CertKey  string // key of the uploaded control-plane certificates
	CAHash   string // sha256:<hex> of the cluster CA's public key
}

// NodeOptions are what differs between nodes' kubeadm configs.
type NodeOptions struct {
	// NodeName is nodeRegistration.name (kubeadm's default is the hostname).
	NodeName string
	// Token, CAHash override the cluster's (to test refusals).
	Token, CAHash string
	// DiscoveryTimeout bounds a join's discovery (kubeadm's default: 5 min).
	DiscoveryTimeout time.Duration
	// ControlPlane joins as a control-plane node (etcd member and API server).
	ControlPlane bool
}

// IgnoredPreflightErrors are the kubeadm preflight checks the host, not the
// configuration, makes fail: SystemVerification on a cgroup v1 host, whose
// controllers a namespace cannot move to v2 (reference
// real-kubeadm-testbed.md §3). A cgroup v2 host ignores nothing.
func IgnoredPreflightErrors() []string {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return nil
	}
	return []string{"SystemVerification"}
}

// InitControlPlane runs `kubeadm init --config --upload-certs` on vm, with
// a config the bed writes: advertise address and node IP the VM's, a fresh
// bootstrap token, the VM's address as controlPlaneEndpoint.
func (b *Bed) InitControlPlane(ctx context.Context, vm *VM, o NodeOptions) (*Cluster, string, error) {
	c := &Cluster{bed: b, First: vm, Endpoint: vm.Spec.IP.String() + ":6443", Token: NewToken(), CertKey: newHex(32)}
	ip := vm.Spec.IP.String()
	cfg := fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens:
- token: %q
  ttl: 1h0m0s
certificateKey: %q
localAPIEndpoint:
  advertiseAddress: %s
  bindPort: 6443
nodeRegistration:
%s---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: %s
controlPlaneEndpoint: %s
networking:
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/12
`, c.Token, c.CertKey, ip, nodeRegistration(o.NodeName, ip), b.o.Bins.Version, c.Endpoint)
	if err := vm.WriteFile("/root/kubeadm-init.yaml", []byte(cfg), 0o600); err != nil {
		return nil, "", err
	}
	out, err := vm.Run(ctx, "kubeadm", "init", "--config", "/root/kubeadm-init.yaml", "--upload-certs", "--skip-token-print", "--skip-certificate-key-print")
	if err != nil {
		return nil, out, err
	}
	ca, err := vm.ReadFile("/etc/kubernetes/pki/ca.crt")
	if err != nil {
		return nil, out, err
	}
	if c.CAHash, err = CAHash(ca); err != nil {
		return nil, out, err
	}
	return c, out, nil
}

// Join runs `kubeadm join --config` on vm against the cluster.
func (c *Cluster) Join(ctx context.Context, vm *VM, o NodeOptions) (string, error) {
	token, hash := c.Token, c.CAHash
	if o.Token != "" {
		token = o.Token
	}
	if o.CAHash != "" {
		hash = o.CAHash
	}
	ip := vm.Spec.IP.String()
	cfg := fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: %s
    token: %q
    caCertHashes:
    - %s
nodeRegistration:
%s`, c.Endpoint, token, hash, nodeRegistration(o.NodeName, ip))
	if o.ControlPlane {
		cfg += fmt.Sprintf("controlPlane:\n  certificateKey: %q\n  localAPIEndpoint:\n    advertiseAddress: %s\n    bindPort: 6443\n", c.CertKey, ip)
	}
	if o.DiscoveryTimeout > 0 {
		cfg += fmt.Sprintf("timeouts:\n  discovery: %s\n", o.DiscoveryTimeout)
	}
	if err := vm.WriteFile("/root/kubeadm-join.yaml", []byte(cfg), 0o600); err != nil {
		return "", err
	}
	return vm.Run(ctx, "kubeadm", "join", "--config", "/root/kubeadm-join.yaml")
}

// RESTConfig is the cluster admin's client config (admin.conf of the first
// control plane), dialling through the bed's switch.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	return c.bed.RESTConfig(c.First, "/etc/kubernetes/admin.conf")
}

// RESTConfig reads a kubeconfig from a VM and makes its client dial
// through the switch.
func (b *Bed) RESTConfig(vm *VM, kubeconfig string) (*rest.Config, error) {
	data, err := vm.ReadFile(kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s of VM %s: %w", kubeconfig, vm.Spec.Name, err)
	}
	// A loopback server is the VM's own local balancer (the cluster's
	// controlPlaneEndpoint), reachable only inside it: from the switch,
	// talk to that VM's API server, whose certificate names its address.
	if u, err := url.Parse(cfg.Host); err == nil {
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil && ip.IsLoopback() {
			cfg.Host = "https://" + net.JoinHostPort(vm.Spec.IP.String(), "6443")
		}
	}
	cfg.Dial = b.DialContext
	cfg.Timeout = 30 * time.Second
	return cfg, nil
}

func nodeRegistration(name, ip string) string {
	var s strings.Builder
	if name != "" {
		fmt.Fprintf(&s, "  name: %s\n", name)
	}
	fmt.Fprintf(&s, "  kubeletExtraArgs:\n  - name: node-ip\n    value: %s\n", ip)
	if ign := IgnoredPreflightErrors(); len(ign) > 0 {
		s.WriteString("  ignorePreflightErrors:\n")
		for _, i := range ign {
			fmt.Fprintf(&s, "  - %s\n", i)
		}
	}
	return s.String()
}

// CAHash is kubeadm's discovery hash of a CA certificate: the SHA-256 of
// its DER SubjectPublicKeyInfo (reference kubeadm.md §4).
func CAHash(caPEM []byte) (string, error) {
	blk, _ := pem.Decode(caPEM)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return "", errors.New("CA: no PEM certificate")
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return "", fmt.Errorf("CA: %w", err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// NewToken returns a random bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}.
func NewToken() string {
	const chars = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 22)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(chars))))
		if err != nil {
			panic(err)
		}
		b[i] = chars[n.Int64()]
	}
	return string(b[:6]) + "." + string(b[6:])
}

func newHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
