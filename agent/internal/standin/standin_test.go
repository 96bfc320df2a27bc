package standin_test

import (
	"bytes"
	"encoding/base64"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/onekube/onekube/agent/internal/standin"
	"github.com/onekube/onekube/agent/internal/standin/env"
	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
)

func TestMain(m *testing.M) {
	code := m.Run()
	standin.Cleanup()
	os.Exit(code)
}

const token = "abcdef.0123456789abcdef"

// node is one simulated VM: its own root and the shared log.
type node struct {
	t    *testing.T
	bin  string
	root string
	log  string
	env  []string
}

func newNode(t *testing.T, log string, extraEnv ...string) *node {
	t.Helper()
	root := t.TempDir()
	return &node{
		t: t, bin: standin.Build(t), root: root, log: log,
		env: append([]string{env.VarRoot + "=" + root, env.VarLog + "=" + log}, extraEnv...),
	}
}

// netNode is a host on the simulated network net with address ip and the
// image's hostname, as simcluster sets each VM up.
func netNode(t *testing.T, log, net, ip string, extraEnv ...string) *node {
	t.Helper()
	n := newNode(t, log, append([]string{env.VarNet + "=" + net}, extraEnv...)...)
	if err := os.Symlink(n.root, filepath.Join(net, ip)); err != nil {
		t.Fatal(err)
	}
	p := n.path("/proc/sys/kernel/hostname")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("onekube-appliance\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return n
}

type result struct {
	code           int
	stdout, stderr string
}

func (n *node) run(name string, args ...string) result {
	n.t.Helper()
	cmd := exec.Command(filepath.Join(n.bin, name), args...)
	cmd.Env = append(os.Environ(), n.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		n.t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

func (n *node) write(name string, data []byte) string {
	n.t.Helper()
	p := filepath.Join(n.root, "var/lib/onekube", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		n.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		n.t.Fatal(err)
	}
	return p
}

func (n *node) path(p string) string { return env.Path(n.root, p) }

func initConfig(t *testing.T, mod func(*kubeadm.InitParams)) []byte {
	t.Helper()
	p := kubeadm.InitParams{
		KubernetesVersion: "v1.37.2",
		NodeName:          "master-0",
		AdvertiseAddress:  netip.MustParseAddr("192.0.2.10"),
		BindPort:          6443,
		PodSubnet:         netip.MustParsePrefix("10.244.0.0/16"),
		Token:             vmcontext.NewSecret(token),
		TokenTTL:          time.Hour,
	}
	if mod != nil {
		mod(&p)
	}
	b, err := kubeadm.RenderInit(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func joinConfig(t *testing.T, hash string) []byte {
	t.Helper()
	return joinConfigAs(t, hash, "worker-1", "192.0.2.11")
}

func joinConfigAs(t *testing.T, hash, name, ip string) []byte {
	t.Helper()
	b, err := kubeadm.RenderJoin(kubeadm.JoinParams{
		KubernetesVersion: "v1.37.2",
		NodeName:          name,
		NodeIP:            netip.MustParseAddr(ip),
		APIServerEndpoint: "192.0.2.10:6443",
		Token:             vmcontext.NewSecret(token),
		CACertHash:        hash,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readLog(t *testing.T, path string) []env.Entry {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600: it holds tokens", st.Mode().Perm())
	}
	entries, err := env.ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestInitWritesARealCA(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	m := newNode(t, log)
	cfg := m.write("init.yaml", initConfig(t, nil))
	r := m.run("kubeadm", "init", "--config", cfg, "--skip-token-print")
	if r.code != 0 {
		t.Fatalf("init failed: %+v", r)
	}
	if strings.Contains(r.stdout, token) || !strings.Contains(r.stdout, "<value withheld>") {
		t.Errorf("--skip-token-print not honoured:\n%s", r.stdout)
	}
	caPEM, err := os.ReadFile(m.path("/etc/kubernetes/pki/ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	hash, err := kubeadm.CACertHash(caPEM)
	if err != nil {
		t.Fatalf("the CA init wrote is not usable: %v", err)
	}
	if got := mode(t, m.path("/etc/kubernetes/pki/ca.key")); got != 0o600 {
		t.Errorf("ca.key mode %v", got)
	}
	if got := mode(t, m.path("/etc/kubernetes/admin.conf")); got != 0o600 {
		t.Errorf("admin.conf mode %v", got)
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CAData string `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
	}
	b, _ := os.ReadFile(m.path("/etc/kubernetes/admin.conf"))
	if err := yaml.Unmarshal(b, &kc); err != nil || len(kc.Clusters) != 1 {
		t.Fatalf("admin.conf: %v\n%s", err, b)
	}
	caData, _ := base64.StdEncoding.DecodeString(kc.Clusters[0].Cluster.CAData)
	if !bytes.Equal(caData, caPEM) || kc.Clusters[0].Cluster.Server != "https://192.0.2.10:6443" {
		t.Errorf("admin.conf does not point at this CA and endpoint: %s", kc.Clusters[0].Cluster.Server)
	}

	entries := readLog(t, log)
	if len(entries) != 1 {
		t.Fatalf("want 1 log line, got %d", len(entries))
	}
	e := entries[0]
	if e.Command != "init" || e.ExitCode != 0 || e.Token != token || e.TokenID != "abcdef" || e.Hash != hash ||
		e.NodeName != "master-0" || e.NodeIP != "192.0.2.10" || e.Endpoint != "192.0.2.10:6443" ||
		e.TokenTTL != "1h0m0s" || e.APIVersion != kubeadm.V1Beta4 || e.Tainted == nil || *e.Tainted {
		t.Errorf("log entry %+v", e)
	}
	if _, err := time.Parse(time.RFC3339Nano, e.Time); err != nil || e.PID == 0 {
		t.Errorf("log time/pid: %q %d", e.Time, e.PID)
	}

	// Preflight: a second init on the running control plane fails with
	// what real kubeadm said on the real bed (its ports, static pods and
	// etcd data; admin.conf is not checked).
	r = m.run("kubeadm", "init", "--config", cfg, "--skip-token-print")
	if r.code != 1 || strings.Contains(r.stderr, "admin.conf") {
		t.Errorf("second init: %+v", r)
	}
	for _, want := range []string{
		"[preflight] Some fatal errors occurred:\n" +
			"\t[ERROR Port-6443]: Port 6443 is in use\n" +
			"\t[ERROR Port-10259]: Port 10259 is in use\n" +
			"\t[ERROR Port-10257]: Port 10257 is in use\n" +
			"\t[ERROR FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml]: /etc/kubernetes/manifests/kube-apiserver.yaml already exists\n" +
			"\t[ERROR FileAvailable--etc-kubernetes-manifests-kube-controller-manager.yaml]: /etc/kubernetes/manifests/kube-controller-manager.yaml already exists\n" +
			"\t[ERROR FileAvailable--etc-kubernetes-manifests-kube-scheduler.yaml]: /etc/kubernetes/manifests/kube-scheduler.yaml already exists\n" +
			"\t[ERROR FileAvailable--etc-kubernetes-manifests-etcd.yaml]: /etc/kubernetes/manifests/etcd.yaml already exists\n" +
			"\t[ERROR Port-10250]: Port 10250 is in use\n" +
			"\t[ERROR Port-2379]: Port 2379 is in use\n" +
			"\t[ERROR Port-2380]: Port 2380 is in use\n" +
			"\t[ERROR DirAvailable--var-lib-etcd]: /var/lib/etcd is not empty\n",
		"error: error execution phase preflight: preflight checks failed\nTo see the stack trace of this error execute with --v=5 or higher\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("second init lacks %q:\n%s", want, r.stderr)
		}
	}
	// ...unless waived, as kubeadm allows: then it keeps the CA and the
	// kubeconfigs that trust it, as kubeadm's certs and kubeconfig phases do.
	r = m.run("kubeadm", "init", "--config", cfg, "--ignore-preflight-errors=all")
	if r.code != 0 || !strings.Contains(r.stdout, `[certs] Using the existing "ca" certificate and key`) ||
		!strings.Contains(r.stdout, `[kubeconfig] Using existing kubeconfig file: "/etc/kubernetes/admin.conf"`) {
		t.Errorf("waived preflight: %+v", r)
	}
	if again, _ := os.ReadFile(m.path("/etc/kubernetes/pki/ca.crt")); !bytes.Equal(again, caPEM) {
		t.Error("init over an existing CA replaced it")
	}
	// reset empties kubeadm's directories (they stay) and deletes the
	// kubeconfigs, as the real reset did on the real bed.
	r = m.run("kubeadm", "reset", "-f")
	if r.code != 0 || !strings.Contains(r.stdout, "[reset] Deleting contents of directories: [/etc/kubernetes/manifests /var/lib/kubelet /etc/kubernetes/pki]") {
		t.Fatalf("reset: %+v", r)
	}
	for _, f := range []string{"/etc/kubernetes/admin.conf", "/etc/kubernetes/super-admin.conf", "/etc/kubernetes/kubelet.conf",
		"/etc/kubernetes/controller-manager.conf", "/etc/kubernetes/scheduler.conf", "/etc/kubernetes/pki/ca.crt",
		"/etc/kubernetes/manifests/kube-apiserver.yaml", "/var/lib/kubelet/config.yaml"} {
		if _, err := os.Stat(m.path(f)); err == nil {
			t.Errorf("reset left %s", f)
		}
	}
	for _, d := range []string{"/etc/kubernetes/manifests", "/etc/kubernetes/pki", "/var/lib/kubelet", "/var/lib/etcd"} {
		if ents, err := os.ReadDir(m.path(d)); err != nil || len(ents) != 0 {
			t.Errorf("after reset %s: %d entries, %v; want it there and empty", d, len(ents), err)
		}
	}
	r = m.run("kubeadm", "init", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "--token "+token) || !strings.Contains(r.stdout, `[certs] Generating "ca" certificate and key`) {
		t.Errorf("init after reset: %+v", r)
	}
}

// TestInitFilesAndForeignKubeconfig: init leaves kubeadm's five
// kubeconfigs and the kubelet's files, as the real one does; a kubeconfig
// that trusts another CA stops it in its kubeconfig phase.
func TestInitFilesAndForeignKubeconfig(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	m := newNode(t, log)
	cfg := m.write("init.yaml", initConfig(t, nil))
	if r := m.run("kubeadm", "init", "--config", cfg); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	for _, f := range []string{"/etc/kubernetes/admin.conf", "/etc/kubernetes/super-admin.conf", "/etc/kubernetes/kubelet.conf",
		"/etc/kubernetes/controller-manager.conf", "/etc/kubernetes/scheduler.conf", "/var/lib/kubelet/config.yaml", "/var/lib/kubelet/kubeadm-flags.env"} {
		if _, err := os.Stat(m.path(f)); err != nil {
			t.Errorf("init did not write %s", f)
		}
	}
	if b, _ := os.ReadFile(m.path("/var/lib/kubelet/kubeadm-flags.env")); !strings.Contains(string(b), "--node-ip=192.0.2.10") {
		t.Errorf("kubeadm-flags.env: %s", b)
	}
	// Another cluster's admin.conf, with this node's CA gone.
	foreign := newNode(t, log)
	if r := foreign.run("kubeadm", "init", "--config", foreign.write("init.yaml", initConfig(t, nil))); r.code != 0 {
		t.Fatal(r)
	}
	if r := m.run("kubeadm", "reset", "-f"); r.code != 0 {
		t.Fatal(r)
	}
	if err := os.WriteFile(m.path("/etc/kubernetes/admin.conf"), mustRead(t, foreign.path("/etc/kubernetes/admin.conf")), 0o600); err != nil {
		t.Fatal(err)
	}
	r := m.run("kubeadm", "init", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, `error: error execution phase kubeconfig: a kubeconfig file "/etc/kubernetes/admin.conf" exists but does not contain a trusted CA`) {
		t.Errorf("init over a foreign admin.conf: %+v", r)
	}
}

// TestConfigWaivesPreflightChecks: nodeRegistration.ignorePreflightErrors
// counts as --ignore-preflight-errors does (kubeadm merges the two).
func TestConfigWaivesPreflightChecks(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	n := newNode(t, log, env.VarFail+"=cri")
	cfg := n.write("init.yaml", initConfig(t, func(p *kubeadm.InitParams) { p.IgnorePreflight = []string{"CRI"} }))
	if r := n.run("kubeadm", "init", "--config", cfg); r.code != 0 {
		t.Errorf("CRI waived in the config: %+v", r)
	}
}

func TestInitRejects(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	good := initConfig(t, nil)
	cases := map[string]struct {
		cfg  []byte
		env  []string
		args []string
		want string
	}{
		"typo'd field":       {bytes.Replace(good, []byte("podSubnet:"), []byte("podSubnett:"), 1), nil, nil, `strict decoding error`},
		"typo'd field named": {bytes.Replace(good, []byte("podSubnet:"), []byte("podSubnett:"), 1), nil, nil, `unknown field "networking.podSubnett"`},
		"bad token":          {bytes.Replace(good, []byte(token), []byte("ABCDEF.0123456789abcdef"), 1), nil, nil, "bootstrap token"},
		"bad subnet":         {bytes.Replace(good, []byte("10.244.0.0/16"), []byte("10.244.0.0/33"), 1), nil, nil, "couldn't parse subnet"},
		"bad address":        {bytes.Replace(good, []byte("advertiseAddress: 192.0.2.10"), []byte("advertiseAddress: 192.0.2"), 1), nil, nil, "cannot parse IP"},
		"no cluster config":  {bytes.Split(good, []byte("---"))[0], nil, nil, "ClusterConfiguration"},
		"old v1beta2":        {bytes.ReplaceAll(good, []byte("v1beta4"), []byte("v1beta2")), nil, nil, "Please use kubeadm v1.22"},
		"old v1beta3":        {bytes.ReplaceAll(good, []byte("v1beta4"), []byte("v1beta3")), nil, nil, "Please use kubeadm v1.36"},
		"skew":               {bytes.Replace(good, []byte("v1.37.2"), []byte("v1.31.0"), 1), nil, nil, ">= 1.36.0"},
		"unknown flag":       {good, nil, []string{"--token-ttl", "0"}, "unknown flag"},
		"no root":            {good, []string{env.VarRoot + "="}, nil, "refuses to write to the real /etc"},
		"root is /":          {good, []string{env.VarRoot + "=/"}, nil, "real /etc"},
		"injected failure":   {good, []string{env.VarFail + "=init"}, nil, "error execution phase wait-control-plane"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := newNode(t, log, tc.env...)
			cfg := n.write("init.yaml", tc.cfg)
			r := n.run("kubeadm", append([]string{"init", "--config", cfg}, tc.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("want exit 1 with %q, got %+v", tc.want, r)
			}
		})
	}
	// An injected init failure leaves files behind, as a real one does.
	n := newNode(t, log, env.VarFail+"=init")
	n.run("kubeadm", "init", "--config", n.write("init.yaml", good))
	if _, err := os.Stat(n.path("/etc/kubernetes/admin.conf")); err != nil {
		t.Errorf("failed init should leave admin.conf: %v", err)
	}
}

// cluster starts a master at 192.0.2.10 on a fresh network and returns
// the network, the master and its CA's pin.
func cluster(t *testing.T, log string) (string, *node, string) {
	t.Helper()
	net := t.TempDir()
	m := netNode(t, log, net, "192.0.2.10")
	if r := m.run("kubeadm", "init", "--config", m.write("init.yaml", initConfig(t, nil))); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	caPEM, _ := os.ReadFile(m.path("/etc/kubernetes/pki/ca.crt"))
	hash, err := kubeadm.CACertHash(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	return net, m, hash
}

func TestJoinVerifiesTheCA(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	net, m, hash := cluster(t, log)
	caPEM, _ := os.ReadFile(m.path("/etc/kubernetes/pki/ca.crt"))

	wrong := strings.Repeat("0", 64)
	w := netNode(t, log, net, "192.0.2.11")
	r := w.run("kubeadm", "join", "--config", w.write("join.yaml", joinConfig(t, wrong)))
	if r.code != 1 || !strings.Contains(r.stderr, "none of the public keys") {
		t.Errorf("join with a wrong hash: %+v", r)
	}
	if _, err := os.Stat(w.path("/etc/kubernetes/kubelet.conf")); err == nil {
		t.Error("failed discovery wrote kubelet.conf")
	}

	cfg := w.write("join.yaml", joinConfig(t, hash))
	if r := w.run("kubeadm", "join", "--config", cfg); r.code != 0 {
		t.Fatalf("join with the right hash: %+v", r)
	}
	if got := mode(t, w.path("/etc/kubernetes/kubelet.conf")); got != 0o600 {
		t.Errorf("kubelet.conf mode %v", got)
	}
	if b, _ := os.ReadFile(w.path("/etc/kubernetes/pki/ca.crt")); !bytes.Equal(b, caPEM) {
		t.Error("join did not store the discovered CA")
	}
	// A second join on the joined node: what real kubeadm said on the
	// real bed, with the running kubelet's port.
	r = w.run("kubeadm", "join", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "[preflight] Some fatal errors occurred:\n"+
		"\t[ERROR FileAvailable--etc-kubernetes-kubelet.conf]: /etc/kubernetes/kubelet.conf already exists\n"+
		"\t[ERROR Port-10250]: Port 10250 is in use\n"+
		"\t[ERROR FileAvailable--etc-kubernetes-pki-ca.crt]: /etc/kubernetes/pki/ca.crt already exists\n") ||
		!strings.Contains(r.stderr, "error: error execution phase preflight: preflight checks failed") {
		t.Errorf("second join: %+v", r)
	}

	var joins []env.Entry
	for _, e := range readLog(t, log) {
		if e.Command == "join" && e.ExitCode == 0 {
			joins = append(joins, e)
		}
	}
	if len(joins) != 1 || joins[0].Token != token || joins[0].Hash != hash || joins[0].NodeName != "worker-1" ||
		joins[0].Endpoint != "192.0.2.10:6443" || joins[0].NodeIP != "192.0.2.11" {
		t.Errorf("join log: %+v", joins)
	}
}

func TestJoinRejects(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	good := joinConfig(t, strings.Repeat("ab", 32))
	cases := map[string]struct {
		cfg  []byte
		want string
	}{
		"typo'd field": {bytes.Replace(good, []byte("apiServerEndpoint:"), []byte("apiServerEndPoint:"), 1), `unknown field "discovery.bootstrapToken.apiServerEndPoint"`},
		"short hash":   {bytes.Replace(good, []byte("abab\n"), []byte("ab\n"), 1), "32 byte SHA-256"},
		"no prefix":    {bytes.Replace(good, []byte("sha256:"), []byte(""), 1), "<type>:<value>"},
		"bad token":    {bytes.Replace(good, []byte(token), []byte("abcdef.0123"), 1), "bootstrap token is invalid"},
		"no endpoint":  {bytes.Replace(good, []byte("apiServerEndpoint: 192.0.2.10:6443"), []byte("apiServerEndpoint: 192.0.2.10"), 1), "missing port"},
		"no hashes":    {bytes.Replace(good, []byte("- sha256:"+strings.Repeat("ab", 32)), []byte(""), 1), "without caCertHashes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := newNode(t, log)
			r := n.run("kubeadm", "join", "--config", n.write("join.yaml", tc.cfg))
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("want exit 1 with %q, got %+v\nconfig:\n%s", tc.want, r, tc.cfg)
			}
		})
	}
}

func TestJoinFaultCounting(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	net, _, hash := cluster(t, log)
	n := netNode(t, log, net, "192.0.2.11", env.VarFail+"=join:2")
	cfg := n.write("join.yaml", joinConfig(t, hash))
	var codes []int
	for range 3 {
		r := n.run("kubeadm", "join", "--config", cfg)
		if r.code != 0 && !strings.Contains(r.stderr, "connection refused") {
			t.Errorf("injected failure text: %s", r.stderr)
		}
		codes = append(codes, r.code)
	}
	if codes[0] != 1 || codes[1] != 1 || codes[2] != 0 {
		t.Errorf("join:2 exit codes %v, want [1 1 0]", codes)
	}
}

func TestDelayVersionAndFlags(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	n := newNode(t, log, env.VarVersion+"=v1.35.2")
	if r := n.run("kubeadm", "version", "-o", "short"); r.code != 0 || r.stdout != "v1.35.2\n" {
		t.Errorf("version: %+v", r)
	}
	d := newNode(t, log)
	if r := d.run("kubeadm", "version", "-o", "short"); r.stdout != env.DefaultVersion+"\n" {
		t.Errorf("default version: %+v", r)
	}
	if r := d.run("kubeadm", "reset"); r.code != 1 {
		t.Errorf("reset without -f: %+v", r)
	}
	if r := d.run("kubeadm", "upgrade", "apply"); r.code != 1 || !strings.Contains(r.stderr, "unknown command") {
		t.Errorf("unknown command: %+v", r)
	}
	slow := newNode(t, log, env.VarDelay+"=300ms")
	cfg := slow.write("init.yaml", initConfig(t, nil))
	start := time.Now()
	if r := slow.run("kubeadm", "init", "--config", cfg); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Error("delay not applied")
	}
	if r := slow.run("kubeadm", "config", "validate", "--config", cfg); r.code != 0 || r.stdout != "ok\n" {
		t.Errorf("config validate: %+v", r)
	}
}

func TestKubectl(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	_, m, _ := cluster(t, log)
	admin := m.path("/etc/kubernetes/admin.conf")
	m.write("admin.keep", mustRead(t, admin))
	manifest := m.write("cni.yaml", []byte("# flannel\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-flannel\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: kube-flannel-ds\n  namespace: kube-flannel\n---\n"))
	r := m.run("kubectl", "--kubeconfig", admin, "apply", "-f", manifest)
	if r.code != 0 || r.stdout != "namespace/kube-flannel created\ndaemonset/kube-flannel-ds created\n" {
		t.Errorf("apply: %+v", r)
	}
	// The VM path works too: it is looked up under the root.
	if r := m.run("kubectl", "apply", "-f", manifest, "--kubeconfig=/etc/kubernetes/admin.conf"); r.code != 0 {
		t.Errorf("apply with VM path: %+v", r)
	}
	bad := m.write("bad.yaml", []byte("apiVersion: v1\nmetadata:\n  name: x\n"))
	if r := m.run("kubectl", "--kubeconfig", admin, "apply", "-f", bad); r.code != 1 || !strings.Contains(r.stderr, "apiVersion and kind are required") {
		t.Errorf("apply without kind: %+v", r)
	}
	broken := m.write("broken.yaml", []byte("apiVersion: v1\nkind: [\n"))
	if r := m.run("kubectl", "--kubeconfig", admin, "apply", "-f", broken); r.code != 1 || !strings.Contains(r.stderr, "error parsing") {
		t.Errorf("apply of broken YAML: %+v", r)
	}
	if r := m.run("kubectl", "--kubeconfig", m.path("/nope.conf"), "apply", "-f", manifest); r.code != 1 {
		t.Errorf("missing kubeconfig: %+v", r)
	}
	if r := m.run("kubectl", "--kubeconfig", admin, "taint", "nodes", "master-0", "node-role.kubernetes.io/control-plane-"); r.code != 0 || !strings.Contains(r.stdout, "node/master-0 untainted") {
		t.Errorf("taint: %+v", r)
	}
	if r := m.run("kubectl", "--kubeconfig", admin, "taint", "nodes", "ghost", "k-"); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("taint unknown node: %+v", r)
	}
	if r := m.run("kubectl", "--kubeconfig", admin, "get", "nodes"); r.code != 0 || !strings.Contains(r.stdout, "master-0   Ready    control-plane") {
		t.Errorf("get nodes: %+v", r)
	}
	// With the control plane reset, nothing answers at the server.
	if r := m.run("kubeadm", "reset", "-f"); r.code != 0 {
		t.Fatal(r)
	}
	if err := os.WriteFile(admin, mustRead(t, m.path("/var/lib/onekube/admin.keep")), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := m.run("kubectl", "--kubeconfig", admin, "apply", "-f", manifest); r.code != 1 || !strings.Contains(r.stderr, "The connection to the server 192.0.2.10:6443 was refused") {
		t.Errorf("apply without an API server: %+v", r)
	}
	var applied []string
	for _, e := range readLog(t, log) {
		if e.Binary == "kubectl" && e.Command == "apply" && e.ExitCode == 0 {
			applied = append(applied, e.Objects...)
		}
	}
	if strings.Join(applied, ",") != "Namespace/kube-flannel,DaemonSet/kube-flannel-ds,Namespace/kube-flannel,DaemonSet/kube-flannel-ds" {
		t.Errorf("logged objects %v", applied)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJoinRefusesDuplicateNodeName: every host sees the same Nodes. A
// second host joining under a name whose Node is Ready is refused in
// kubeadm's words (and left needing a reset); once that Node's kubelet is
// gone, the name can be taken over.
func TestJoinRefusesDuplicateNodeName(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	net, m, hash := cluster(t, log)
	a := netNode(t, log, net, "192.0.2.11")
	b := netNode(t, log, net, "192.0.2.12", env.VarNodeGrace+"=1s")
	if r := a.run("kubeadm", "join", "--config", a.write("join.yaml", joinConfigAs(t, hash, "worker", "192.0.2.11"))); r.code != 0 {
		t.Fatalf("first join: %+v", r)
	}
	cfgB := b.write("join.yaml", joinConfigAs(t, hash, "worker", "192.0.2.12"))
	r := b.run("kubeadm", "join", "--config", cfgB)
	want := `error execution phase kubelet-start: a Node with name "worker" and status "Ready" already exists in the cluster. You must delete the existing Node or change the name of this new joining Node`
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("duplicate join: %+v", r)
	}
	if _, err := os.Stat(b.path("/etc/kubernetes/pki/ca.crt")); err != nil {
		t.Error("a refused kubelet-start leaves the CA behind, as kubeadm's does")
	}
	if r := b.run("kubeadm", "join", "--config", cfgB); r.code != 1 || !strings.Contains(r.stderr, "FileAvailable--etc-kubernetes-pki-ca.crt") {
		t.Errorf("retry without reset: %+v", r)
	}
	// The master's own name is as taken.
	if r := a.run("kubeadm", "reset", "-f"); r.code != 0 {
		t.Fatal(r)
	}
	if r := a.run("kubeadm", "join", "--config", a.write("join.yaml", joinConfigAs(t, hash, "master-0", "192.0.2.11"))); r.code != 1 || !strings.Contains(r.stderr, `a Node with name "master-0"`) {
		t.Errorf("join as the master: %+v", r)
	}
	// a's kubelet stopped with its reset, but its Node stays Ready for the
	// node monitor grace period (b's is 1 s here): refused until then, as
	// real kubeadm refused a worker re-joining after its own reset.
	if r := b.run("kubeadm", "reset", "-f"); r.code != 0 {
		t.Fatal(r)
	}
	if r := b.run("kubeadm", "join", "--config", cfgB); r.code != 1 || !strings.Contains(r.stderr, `a Node with name "worker" and status "Ready"`) {
		t.Fatalf("join under a Node whose kubelet just stopped: %+v", r)
	}
	time.Sleep(1100 * time.Millisecond)
	if r := b.run("kubeadm", "reset", "-f"); r.code != 0 {
		t.Fatal(r)
	}
	if r := b.run("kubeadm", "join", "--config", cfgB); r.code != 0 {
		t.Fatalf("take-over of a NotReady Node: %+v", r)
	}
	out := m.run("kubectl", "--kubeconfig", m.path("/etc/kubernetes/admin.conf"), "get", "nodes").stdout
	if !strings.Contains(out, "worker     Ready") || strings.Count(out, "worker ") != 1 {
		t.Errorf("get nodes:\n%s", out)
	}
}

// withDiscoveryTimeout bounds a rendered v1beta4 join's discovery.
func withDiscoveryTimeout(cfg []byte, d time.Duration) []byte {
	return append(cfg, []byte("timeouts:\n  discovery: "+d.String()+"\n")...)
}

// TestJoinUnreachableAPIServer: nothing at the address, or a host without
// an API server there, fails discovery as a dial would, once kubeadm's
// discovery has retried every 5 s until its timeout.
func TestJoinUnreachableAPIServer(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	net, _, hash := cluster(t, log)
	w := netNode(t, log, net, "192.0.2.11")
	_ = netNode(t, log, net, "192.0.2.12") // a host without a control plane
	for endpoint, want := range map[string]string{
		"192.0.2.99:6443": "no route to host",
		"192.0.2.12:6443": "connection refused",
		"192.0.2.10:7443": "connection refused", // the master, another port
	} {
		cfg := bytes.Replace(joinConfig(t, hash), []byte("192.0.2.10:6443"), []byte(endpoint), 1)
		r := w.run("kubeadm", "join", "--config", w.write("join.yaml", withDiscoveryTimeout(cfg, time.Second)))
		if r.code != 1 || !strings.Contains(r.stderr, "error: error execution phase preflight: couldn't validate the identity of the API Server: failed to request the cluster-info ConfigMap") || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: %+v", endpoint, r)
		}
	}
	start := time.Now()
	cfg := bytes.Replace(joinConfig(t, hash), []byte("192.0.2.10:6443"), []byte("192.0.2.12:6443"), 1)
	if r := w.run("kubeadm", "join", "--config", w.write("join.yaml", withDiscoveryTimeout(cfg, 6*time.Second))); r.code != 1 {
		t.Errorf("join to a host without an API server: %+v", r)
	}
	if took := time.Since(start); took < 5*time.Second {
		t.Errorf("discovery gave up after %s, before its second try at 5 s", took)
	}
}

// TestJoinVerifiesTheToken: cluster-info is signed only for the tokens the
// API server has and that have not expired; discovery checks the
// signature's secret before it pins the CA. The messages are real
// kubeadm's on the real bed.
func TestJoinVerifiesTheToken(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	net, _, hash := cluster(t, log)
	w := netNode(t, log, net, "192.0.2.11")
	join := func(tok, h string) result {
		cfg := bytes.Replace(joinConfig(t, h), []byte(token), []byte(tok), 1)
		return w.run("kubeadm", "join", "--config", w.write("join.yaml", withDiscoveryTimeout(cfg, time.Second)))
	}
	if r := join("zzzzzz.0123456789abcdef", hash); r.code != 1 || !strings.Contains(r.stderr,
		`couldn't validate the identity of the API Server: could not find a JWS signature in the cluster-info ConfigMap for token ID "zzzzzz"`) {
		t.Errorf("unknown token ID: %+v", r)
	}
	if r := join("abcdef.0000000000000000", strings.Repeat("ab", 32)); r.code != 1 || !strings.Contains(r.stderr,
		"couldn't validate the identity of the API Server: failed to verify JWS signature of received cluster info object, can't trust this API Server") {
		t.Errorf("wrong secret (and hash): %+v", r)
	}
	if _, err := os.Stat(w.path("/etc/kubernetes")); err == nil {
		t.Error("a failed discovery wrote under /etc/kubernetes")
	}

	// A token past its TTL signs nothing.
	short := newNode(t, log)
	_ = os.Symlink(short.root, filepath.Join(net, "192.0.2.20"))
	short.env = append(short.env, env.VarNet+"="+net)
	cfg := initConfig(t, func(p *kubeadm.InitParams) {
		p.AdvertiseAddress = netip.MustParseAddr("192.0.2.20")
		p.TokenTTL = time.Second
	})
	if r := short.run("kubeadm", "init", "--config", short.write("init.yaml", cfg)); r.code != 0 {
		t.Fatal(r)
	}
	caPEM, _ := os.ReadFile(short.path("/etc/kubernetes/pki/ca.crt"))
	h, _ := kubeadm.CACertHash(caPEM)
	time.Sleep(1100 * time.Millisecond)
	jc := bytes.Replace(joinConfig(t, h), []byte("192.0.2.10:6443"), []byte("192.0.2.20:6443"), 1)
	if r := w.run("kubeadm", "join", "--config", w.write("join.yaml", withDiscoveryTimeout(jc, time.Second))); r.code != 1 ||
		!strings.Contains(r.stderr, `could not find a JWS signature in the cluster-info ConfigMap for token ID "abcdef"`) {
		t.Errorf("expired token: %+v", r)
	}
}

// TestCRIFailureOutput: the commonest preflight failure, with its '=',
// quotes, escapes and brackets, as kubeadm prints it.
func TestCRIFailureOutput(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	n := newNode(t, log, env.VarFail+"=cri")
	r := n.run("kubeadm", "init", "--config", n.write("init.yaml", initConfig(t, nil)))
	for _, want := range []string{
		"[preflight] Some fatal errors occurred:\n\t[ERROR CRI]: container runtime is not running: output: time=\"",
		`level=fatal msg="validate service connection: validate CRI v1 runtime API for endpoint \"unix:///var/run/containerd/containerd.sock\"`,
		"\n, error: exit status 1\n",
		"error execution phase preflight: preflight checks failed\nTo see the stack trace",
	} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r := n.run("kubeadm", "init", "--config", n.write("init.yaml", initConfig(t, nil)), "--ignore-preflight-errors=CRI"); r.code != 0 {
		t.Errorf("waived CRI check: %+v", r)
	}
}
