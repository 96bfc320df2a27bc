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
		KubernetesVersion: "v1.36.3",
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
	b, err := kubeadm.RenderJoin(kubeadm.JoinParams{
		KubernetesVersion: "v1.36.3",
		NodeName:          "worker-1",
		NodeIP:            netip.MustParseAddr("192.0.2.11"),
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

	// Preflight: a second init over the leftovers fails like kubeadm's.
	r = m.run("kubeadm", "init", "--config", cfg, "--skip-token-print")
	if r.code != 1 || !strings.Contains(r.stderr, "[preflight]") || !strings.Contains(r.stderr, "/etc/kubernetes/admin.conf already exists") {
		t.Errorf("second init: %+v", r)
	}
	// ...unless waived, as kubeadm allows.
	if r := m.run("kubeadm", "init", "--config", cfg, "--ignore-preflight-errors=all"); r.code != 0 {
		t.Errorf("waived preflight: %+v", r)
	}
	// reset clears the way.
	if r := m.run("kubeadm", "reset", "-f"); r.code != 0 {
		t.Fatalf("reset: %+v", r)
	}
	for _, f := range []string{"/etc/kubernetes/admin.conf", "/etc/kubernetes/pki/ca.crt", "/etc/kubernetes/manifests/kube-apiserver.yaml"} {
		if _, err := os.Stat(m.path(f)); err == nil {
			t.Errorf("reset left %s", f)
		}
	}
	if r := m.run("kubeadm", "init", "--config", cfg); r.code != 0 || !strings.Contains(r.stdout, "--token "+token) {
		t.Errorf("init after reset: %+v", r)
	}
}

func TestInitRejects(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	good := initConfig(t, nil)
	v3 := initConfig(t, func(p *kubeadm.InitParams) { p.APIVersion = kubeadm.V1Beta3 })
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
		"old v1beta2":        {bytes.ReplaceAll(good, []byte("v1beta4"), []byte("v1beta2")), nil, nil, "old or unknown API spec"},
		"skew":               {bytes.Replace(good, []byte("v1.36.3"), []byte("v1.31.0"), 1), nil, nil, ">= 1.35.0"},
		"v1beta3 on 1.37":    {v3, []string{env.VarVersion + "=v1.37.0"}, nil, "old API spec"},
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
	// The v1beta3 render itself is fine for kubeadm 1.36.
	n := newNode(t, log)
	if r := n.run("kubeadm", "init", "--config", n.write("init.yaml", v3)); r.code != 0 {
		t.Errorf("v1beta3 init: %+v", r)
	}
	// An injected init failure leaves files behind, as a real one does.
	n = newNode(t, log, env.VarFail+"=init")
	n.run("kubeadm", "init", "--config", n.write("init.yaml", good))
	if _, err := os.Stat(n.path("/etc/kubernetes/admin.conf")); err != nil {
		t.Errorf("failed init should leave admin.conf: %v", err)
	}
}

func TestJoinVerifiesTheCA(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.jsonl")
	m := newNode(t, log)
	if r := m.run("kubeadm", "init", "--config", m.write("init.yaml", initConfig(t, nil))); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	caFile := m.path("/etc/kubernetes/pki/ca.crt")
	caPEM, _ := os.ReadFile(caFile)
	hash, err := kubeadm.CACertHash(caPEM)
	if err != nil {
		t.Fatal(err)
	}

	wrong := strings.Repeat("0", 64)
	w := newNode(t, log, env.VarCA+"="+caFile)
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
	r = w.run("kubeadm", "join", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "/etc/kubernetes/kubelet.conf already exists") {
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
	n := newNode(t, log, env.VarFail+"=join:2")
	cfg := n.write("join.yaml", joinConfig(t, strings.Repeat("ab", 32)))
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
	m := newNode(t, log)
	if r := m.run("kubeadm", "init", "--config", m.write("init.yaml", initConfig(t, nil))); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	admin := m.path("/etc/kubernetes/admin.conf")
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
	if r := m.run("kubectl", "--kubeconfig", admin, "get", "nodes"); r.code != 0 || !strings.Contains(r.stdout, "master-0") || !strings.Contains(r.stdout, "control-plane") {
		t.Errorf("get nodes: %+v", r)
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
