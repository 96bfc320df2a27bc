//go:build realbed

package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/testbed"
)

// flowEnv serves oned and OneFlow on the switch and returns the
// environment `onekube-flow` runs with there: HOME with oneadmin's
// one_auth, and KUBECONFIG in that HOME.
func flowEnv(t *testing.T, b *testbed.Bed, s *testbed.Service) []string {
	t.Helper()
	for addr, h := range map[string]http.Handler{onedAddr: s.Sim.OnedHandler("oneadmin", "pw"), flowAddr: s.Sim.OneFlowHandler("oneadmin", "pw")} {
		ln, err := b.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".one"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".one", "one_auth"), []byte("oneadmin:pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"HOME=" + home, "ONE_XMLRPC=http://" + onedAddr + "/RPC2", "ONEFLOW_URL=http://" + flowAddr,
		"KUBECONFIG=" + filepath.Join(home, ".kube", "config")}
}
