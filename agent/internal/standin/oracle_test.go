package standin_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestStandinAgreesWithKubeadm feeds the same configs to the stand-in and to
// the real kubeadm's `config validate` (via $KUBEADM, skipped without it), so
// the stand-in's accept/reject rules are checked rather than assumed.
func TestStandinAgreesWithKubeadm(t *testing.T) {
	bin := os.Getenv("KUBEADM")
	if bin == "" {
		t.Skip("no kubeadm oracle: set KUBEADM (make kubeadm-oracle)")
	}
	good := initConfig(t, nil)
	join := joinConfig(t, "sha256:"+string(bytes.Repeat([]byte("ab"), 32)))
	cases := map[string]struct {
		cfg []byte
		ok  bool
		// validateOnly: kubeadm's `config validate` accepts it but a real
		// join fails on it (the hash format is checked at discovery); the
		// stand-in refuses it up front.
		validateOnly bool
	}{
		"init":            {cfg: good, ok: true},
		"join":            {cfg: join, ok: true},
		"typo":            {cfg: bytes.Replace(good, []byte("podSubnet:"), []byte("podSubnett:"), 1), ok: false},
		"case typo":       {cfg: bytes.Replace(join, []byte("apiServerEndpoint:"), []byte("apiServerEndPoint:"), 1), ok: false},
		"bad token":       {cfg: bytes.Replace(good, []byte(token), []byte("ABCDEF.0123456789abcdef"), 1), ok: false},
		"bad subnet":      {cfg: bytes.Replace(good, []byte("10.244.0.0/16"), []byte("10.244.0.0/33"), 1), ok: false},
		"skew":            {cfg: bytes.Replace(good, []byte("v1.37.2"), []byte("v1.31.0"), 1), ok: false},
		"old API":         {cfg: bytes.ReplaceAll(good, []byte("v1beta4"), []byte("v1beta2")), ok: false},
		"bad address":     {cfg: bytes.Replace(good, []byte("advertiseAddress: 192.0.2.10"), []byte("advertiseAddress: 192.0.2"), 1), ok: false},
		"join no port":    {cfg: bytes.Replace(join, []byte("192.0.2.10:6443"), []byte("192.0.2.10"), 1), ok: false},
		"join bad hash":   {cfg: bytes.Replace(join, []byte("sha256:"), []byte("md5:"), 1), validateOnly: true},
		"join short hash": {cfg: bytes.Replace(join, []byte("abab\n"), []byte("ab\n"), 1), validateOnly: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := newNode(t, filepath.Join(t.TempDir(), "log"))
			f := n.write("cfg.yaml", tc.cfg)
			real, err := exec.Command(bin, "config", "validate", "--config", f).CombinedOutput()
			if (err == nil) != (tc.ok || tc.validateOnly) {
				t.Fatalf("real kubeadm: ok=%v, want %v\n%s", err == nil, tc.ok || tc.validateOnly, real)
			}
			r := n.run("kubeadm", "config", "validate", "--config", f)
			if (r.code == 0) != tc.ok {
				t.Errorf("stand-in: ok=%v, want %v\nstand-in: %s\nkubeadm: %s", r.code == 0, tc.ok, r.stderr, real)
			}
		})
	}
}
