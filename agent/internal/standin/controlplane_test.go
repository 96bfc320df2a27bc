package standin_test

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/internal/standin/env"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/lb/lbconfig"
	vmcontext "github.com/onekube/onekube/context"
)

const (
	certKey  = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
	otherKey = "1f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
)

func cpJoinConfig(t *testing.T, hash, name, ip, endpoint, key string) []byte {
	t.Helper()
	b, err := kubeadm.RenderJoin(kubeadm.JoinParams{
		KubernetesVersion: "v1.37.2",
		NodeName:          name,
		NodeIP:            netip.MustParseAddr(ip),
		APIServerEndpoint: endpoint,
		Token:             vmcontext.NewSecret(token),
		CACertHash:        hash,
		ControlPlane: &kubeadm.JoinControlPlane{
			AdvertiseAddress: netip.MustParseAddr(ip),
			CertificateKey:   vmcontext.NewSecret(key),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seed writes a host's local balancer file, as the agent's lb-seed does.
func (n *node) seed(backends ...string) {
	n.t.Helper()
	if err := lbconfig.WriteConfig(n.path(lbconfig.ConfigFile), lbconfig.Config{Backends: backends}); err != nil {
		n.t.Fatal(err)
	}
}

// initHA initialises 192.0.2.10 with the local balancer as endpoint and
// uploaded certificates; it returns the master and the CA pin.
func initHA(t *testing.T, log, net string, endpoint string) (*node, string) {
	t.Helper()
	m := netNode(t, log, net, "192.0.2.10")
	m.seed("192.0.2.10:6443")
	cfg := m.write("init.yaml", initConfig(t, func(p *kubeadm.InitParams) {
		p.ControlPlaneEndpoint = endpoint
		p.CertificateKey = vmcontext.NewSecret(certKey)
	}))
	// Without --skip-certificate-key-print the key is printed, as kubeadm
	// prints it (phases/init/uploadcerts.go).
	if r := m.run("kubeadm", "init", "--config", cfg, "--upload-certs", "--skip-token-print"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	} else if !strings.Contains(r.stdout, "[upload-certs] Using certificate key:\n"+certKey+"\n") {
		t.Errorf("init did not print the key as kubeadm does:\n%s", r.stdout)
	}
	entries := readLog(t, log)
	return m, entries[len(entries)-1].Hash
}

// TestControlPlaneJoinRules: the joins kubeadm refuses are refused, in its
// words; the right one succeeds through the host's balancer and serves the
// same Nodes.
func TestControlPlaneJoinRules(t *testing.T) {
	dir := t.TempDir()
	log, net := filepath.Join(dir, "log.jsonl"), filepath.Join(dir, "net")
	if err := os.MkdirAll(net, 0o755); err != nil {
		t.Fatal(err)
	}
	_, hash := initHA(t, log, net, "127.0.0.1:6444")

	cp := netNode(t, log, net, "192.0.2.11")
	// No balancer file yet: nothing listens on 127.0.0.1:6444.
	cfg := cp.write("join.yaml", cpJoinConfig(t, hash, "master-11", "192.0.2.11", "127.0.0.1:6444", certKey))
	if r := cp.run("kubeadm", "join", "--config", cfg); r.code == 0 || !strings.Contains(r.stderr, "connection refused") {
		t.Fatalf("join without a balancer: %d %s", r.code, r.stderr)
	}
	cp.seed("192.0.2.10:6443", "192.0.2.11:6443")
	// The wrong key does not open kubeadm-certs.
	bad := cp.write("bad.yaml", cpJoinConfig(t, hash, "master-11", "192.0.2.11", "127.0.0.1:6444", otherKey))
	if r := cp.run("kubeadm", "join", "--config", bad); r.code == 0 || !strings.Contains(r.stderr, "error decoding secret data with provided key") {
		t.Fatalf("join with the wrong key: %d %s", r.code, r.stderr)
	}
	cp.run("kubeadm", "reset", "-f")
	if r := cp.run("kubeadm", "join", "--config", cfg); r.code != 0 {
		t.Fatalf("join: %s", r.stderr)
	}
	nodes, err := env.ServerOf(cp.root).Nodes()
	if err != nil || len(nodes) != 2 {
		t.Fatalf("the joined control plane serves %v, %v", nodes, err)
	}
	// A worker joins through the second master's API server alone.
	w := netNode(t, log, net, "192.0.2.12")
	w.seed("192.0.2.11:6443")
	wcfg := w.write("join.yaml", func() []byte {
		b, err := kubeadm.RenderJoin(kubeadm.JoinParams{KubernetesVersion: "v1.37.2", NodeName: "worker-12", NodeIP: netip.MustParseAddr("192.0.2.12"),
			APIServerEndpoint: "127.0.0.1:6444", Token: vmcontext.NewSecret(token), CACertHash: hash})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}())
	if r := w.run("kubeadm", "join", "--config", wcfg); r.code != 0 {
		t.Fatalf("worker join through the second master: %s", r.stderr)
	}
}

// TestControlPlaneJoinNeedsAStableEndpoint and fresh certificates.
func TestControlPlaneJoinNeedsAStableEndpointAndFreshCerts(t *testing.T) {
	dir := t.TempDir()
	log, net := filepath.Join(dir, "log.jsonl"), filepath.Join(dir, "net")
	if err := os.MkdirAll(net, 0o755); err != nil {
		t.Fatal(err)
	}
	m, hash := initHA(t, log, net, "")
	cp := netNode(t, log, net, "192.0.2.11")
	cfg := cp.write("join.yaml", cpJoinConfig(t, hash, "master-11", "192.0.2.11", "192.0.2.10:6443", certKey))
	if r := cp.run("kubeadm", "join", "--config", cfg); r.code == 0 || !strings.Contains(r.stderr, "doesn't have a stable controlPlaneEndpoint address") {
		t.Fatalf("join into a cluster without an endpoint: %d %s", r.code, r.stderr)
	}

	dir2 := t.TempDir()
	log2, net2 := filepath.Join(dir2, "log.jsonl"), filepath.Join(dir2, "net")
	if err := os.MkdirAll(net2, 0o755); err != nil {
		t.Fatal(err)
	}
	m, hash = initHA(t, log2, net2, "192.0.2.10:6443")
	// Two hours later kubeadm's garbage collector has deleted kubeadm-certs.
	api := env.ServerOf(m.root)
	c, err := api.Certs(time.Now())
	if err != nil || c == nil {
		t.Fatalf("certs %v %v", c, err)
	}
	c.Uploaded = c.Uploaded.Add(-env.CertsTTL)
	if err := api.SetCerts(*c); err != nil {
		t.Fatal(err)
	}
	cp2 := netNode(t, log2, net2, "192.0.2.11")
	cfg2 := cp2.write("join.yaml", cpJoinConfig(t, hash, "master-11", "192.0.2.11", "192.0.2.10:6443", certKey))
	if r := cp2.run("kubeadm", "join", "--config", cfg2); r.code == 0 || !strings.Contains(r.stderr, `Secret "kubeadm-certs" was not found`) {
		t.Fatalf("join after 2 h: %d %s", r.code, r.stderr)
	}
	// A fresh upload on the master, with a new key, lets it join.
	up := m.write("up.yaml", func() []byte {
		b, err := kubeadm.RenderUploadCerts("v1.37.2", "master-0", vmcontext.NewSecret(otherKey))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}())
	if r := m.run("kubeadm", "init", "phase", "upload-certs", "--upload-certs", "--config", up, "--skip-certificate-key-print"); r.code != 0 {
		t.Fatalf("upload-certs: %s", r.stderr)
	} else if strings.Contains(r.stdout, otherKey) {
		t.Errorf("upload-certs printed the key despite --skip-certificate-key-print:\n%s", r.stdout)
	}
	cp2.run("kubeadm", "reset", "-f")
	cfg3 := cp2.write("join2.yaml", cpJoinConfig(t, hash, "master-11", "192.0.2.11", "192.0.2.10:6443", otherKey))
	if r := cp2.run("kubeadm", "join", "--config", cfg3); r.code != 0 {
		t.Fatalf("join after a fresh upload: %s", r.stderr)
	}
	var entries []env.Entry
	for _, e := range readLog(t, log2) {
		entries = append(entries, e)
	}
	b, _ := json.Marshal(entries[len(entries)-1])
	if strings.Contains(string(b), otherKey) {
		t.Error("the stand-in's log holds the certificate key")
	}
}
