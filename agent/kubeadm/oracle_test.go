package kubeadm

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"
	"sigs.k8s.io/yaml"
)

// Oracle tests check rendered configs and hashes against a real kubeadm,
// found through $KUBEADM (`make kubeadm-oracle` builds one) or PATH. Without
// it they skip. They render for the oracle's own release, because kubeadm
// v1.N only accepts kubernetesVersion >= v1.(N-1).0.

type oracle struct {
	bin   string
	ver   string // "v1.37.2"
	minor int
}

func findOracle(t *testing.T) oracle {
	t.Helper()
	bin := os.Getenv("KUBEADM")
	if bin == "" {
		p, err := exec.LookPath("kubeadm")
		if err != nil {
			t.Skip("no kubeadm oracle: set KUBEADM (make kubeadm-oracle) or put kubeadm on PATH")
		}
		bin = p
	}
	out, err := runOracle(t, bin, "version", "-o", "short")
	if err != nil {
		t.Fatalf("kubeadm oracle %s does not run: %v\n%s", bin, err, out)
	}
	ver := strings.TrimSpace(out)
	v, err := parseVersion(ver)
	if err != nil || !v.hasPatch {
		t.Fatalf("kubeadm oracle %s reports version %q: build it stamped (make kubeadm-oracle)", bin, ver)
	}
	if v.minor < minMinor {
		t.Skipf("kubeadm oracle %s is %s; these tests need 1.%d or newer", bin, ver, minMinor)
	}
	return oracle{bin: bin, ver: ver, minor: v.minor}
}

func runOracle(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// validate runs `kubeadm config validate` on cfg and returns its output.
func (o oracle) validate(t *testing.T, cfg []byte) (string, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "kubeadm.yaml")
	if err := os.WriteFile(f, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return runOracle(t, o.bin, "config", "validate", "--config", f)
}

// retarget points a case at the oracle's release, keeping the API version
// its golden uses (golden version k8s).
func (o oracle) retarget(t *testing.T, k8s string) (version, api string) {
	t.Helper()
	api, err := APIVersionFor(k8s)
	if err != nil {
		t.Fatal(err)
	}
	return o.ver, api
}

func TestOracleValidatesRenders(t *testing.T) {
	o := findOracle(t)
	prev := "v1." + strconv.Itoa(o.minor-1) + ".0" // the oldest release the oracle accepts
	for name, p := range initCases() {
		for _, k8s := range []string{o.ver, prev} {
			t.Run(name+"/"+k8s, func(t *testing.T) {
				_, p.APIVersion = o.retarget(t, p.KubernetesVersion)
				p.KubernetesVersion = k8s
				o.mustValidate(t, p.APIVersion, func() ([]byte, error) { return RenderInit(p) })
			})
		}
	}
	for name, p := range joinCases() {
		t.Run(name, func(t *testing.T) {
			p.KubernetesVersion, p.APIVersion = o.retarget(t, p.KubernetesVersion)
			o.mustValidate(t, p.APIVersion, func() ([]byte, error) { return RenderJoin(p) })
		})
	}
	t.Run("generated token", func(t *testing.T) {
		tok, err := GenerateToken(nil)
		if err != nil {
			t.Fatal(err)
		}
		p := baseInit()
		p.KubernetesVersion, p.Token = o.ver, tok
		o.mustValidate(t, V1Beta4, func() ([]byte, error) { return RenderInit(p) })
		j := baseJoin()
		j.KubernetesVersion, j.Token = o.ver, tok
		o.mustValidate(t, V1Beta4, func() ([]byte, error) { return RenderJoin(j) })
	})
	// The oracle must be able to fail, or the checks above prove nothing.
	t.Run("negative control", func(t *testing.T) {
		p := baseInit()
		p.KubernetesVersion = o.ver
		cfg, err := RenderInit(p)
		if err != nil {
			t.Fatal(err)
		}
		cfg = bytes.Replace(cfg, []byte("podSubnet:"), []byte("podSubnett:"), 1)
		out, err := o.validate(t, cfg)
		if err == nil || !strings.Contains(out, "unknown field") {
			t.Errorf("kubeadm accepted a typo'd field: %v\n%s", err, out)
		}
	})
}

func (o oracle) mustValidate(t *testing.T, api string, render func() ([]byte, error)) {
	t.Helper()
	cfg, err := render()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cfg, []byte("apiVersion: "+api+"\n")) {
		t.Fatalf("render is not %s:\n%s", api, cfg)
	}
	out, err := o.validate(t, cfg)
	if err != nil {
		t.Fatalf("kubeadm %s rejects the render: %v\n%s\nconfig:\n%s", o.ver, err, out, cfg)
	}
	if !strings.Contains(out, "ok") {
		t.Errorf("kubeadm config validate said:\n%s", out)
	}
}

// TestOracleTaints checks the taint decision against kubeadm's defaulting:
// "taints: null" must become the control-plane taint, "taints: []" none.
func TestOracleTaints(t *testing.T) {
	o := findOracle(t)
	for _, keep := range []bool{true, false} {
		p := baseInit()
		p.KubernetesVersion, p.TaintControlPlane = o.ver, keep
		cfg, err := RenderInit(p)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in.yaml"), filepath.Join(dir, "out.yaml")
		if err := os.WriteFile(in, cfg, 0o600); err != nil {
			t.Fatal(err)
		}
		if msg, err := runOracle(t, o.bin, "config", "migrate", "--old-config", in, "--new-config", out); err != nil {
			t.Fatalf("migrate: %v\n%s", err, msg)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var ic *v1beta4.InitConfiguration
		for _, doc := range splitDocs(b) {
			var c v1beta4.InitConfiguration
			if err := yaml.Unmarshal(doc, &c); err == nil && c.Kind == "InitConfiguration" {
				ic = &c
			}
		}
		if ic == nil {
			t.Fatalf("no InitConfiguration in kubeadm's output:\n%s", b)
		}
		got := ic.NodeRegistration.Taints
		tainted := len(got) == 1 && got[0].Key == "node-role.kubernetes.io/control-plane"
		if keep != tainted {
			t.Errorf("TaintControlPlane=%v: kubeadm defaults taints to %v", keep, got)
		}
	}
}

var joinHash = regexp.MustCompile(`--discovery-token-ca-cert-hash sha256:([0-9a-f]{64})`)

// TestOracleCACertHash compares CACertHash with the hash kubeadm prints in
// its join command, for kubeadm's default RSA CA and an ECDSA one.
func TestOracleCACertHash(t *testing.T) {
	o := findOracle(t)
	cases := map[string]string{"RSA-2048": "", "ECDSA-P256": "ECDSA-P256"}
	for name, alg := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pki, kc := filepath.Join(dir, "pki"), filepath.Join(dir, "kc")
			var certArgs, kcArgs []string
			if alg == "" {
				certArgs = []string{"init", "phase", "certs", "ca", "--cert-dir", pki, "--kubernetes-version", o.ver}
				kcArgs = []string{"init", "phase", "kubeconfig", "admin", "--cert-dir", pki, "--kubeconfig-dir", kc,
					"--control-plane-endpoint", "127.0.0.1:6443", "--kubernetes-version", o.ver}
			} else {
				cfg := filepath.Join(dir, "cluster.yaml")
				doc := "apiVersion: " + V1Beta4 + "\nkind: ClusterConfiguration\nkubernetesVersion: " + o.ver +
					"\nencryptionAlgorithm: " + alg + "\ncertificatesDir: " + pki + "\ncontrolPlaneEndpoint: 127.0.0.1:6443\n"
				if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
					t.Fatal(err)
				}
				certArgs = []string{"init", "phase", "certs", "ca", "--config", cfg}
				kcArgs = []string{"init", "phase", "kubeconfig", "admin", "--config", cfg, "--kubeconfig-dir", kc}
			}
			for _, args := range [][]string{certArgs, kcArgs} {
				if out, err := runOracle(t, o.bin, args...); err != nil {
					t.Fatalf("kubeadm %v: %v\n%s", args, err, out)
				}
			}
			out, err := runOracle(t, o.bin, "token", "create", "--dry-run", "--print-join-command",
				"--kubeconfig", filepath.Join(kc, "admin.conf"), testToken)
			if err != nil {
				t.Fatalf("token create: %v\n%s", err, out)
			}
			m := joinHash.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no hash in kubeadm's join command:\n%s", out)
			}
			ca, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := CACertHash(ca)
			if err != nil {
				t.Fatal(err)
			}
			if got != m[1] {
				t.Errorf("CACertHash = %s, kubeadm says %s", got, m[1])
			}
		})
	}
}
