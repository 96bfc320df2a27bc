package agent

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

// TestOneGateOverHTTPSWithPrivateCA: the production client trusts a
// private CA given by --onegate-ca-file or ONEKUBE_ONEGATE_CA, and nothing
// else besides the system's.
func TestOneGateOverHTTPSWithPrivateCA(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"VM":{"ID":"7","USER_TEMPLATE":{"ROLE_NAME":"worker"}}}`))
	}))
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	creds := vmcontext.Credentials{Endpoint: srv.URL, VMID: 7, Token: vmcontext.NewSecret(testOneGateToken)}
	for name, c := range map[string]OneGateConfig{
		"--onegate-ca-file":  {Creds: creds, CAFile: caFile},
		"ONEKUBE_ONEGATE_CA": {Creds: creds, CAPEM: caPEM},
	} {
		og, err := NewOneGateClient(c)
		if err != nil {
			t.Fatal(err)
		}
		if vm, err := og.GetVM(bounded(t)); err != nil || vm.ID != 7 {
			t.Errorf("%s: %v", name, err)
		}
	}
	og, err := NewOneGateClient(OneGateConfig{Creds: creds})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := og.GetVM(bounded(t)); err == nil || IsRetryable(err) || errors.Is(err, ErrUnauthorized) {
		t.Errorf("without the CA: %v, want a final certificate error", err)
	}
}
