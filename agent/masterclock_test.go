package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/kubeadm"
)

// clusterInfo is the cluster-info ConfigMap as kubeadm publishes it.
func clusterInfo(caPEM []byte) []byte {
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: " +
		base64.StdEncoding.EncodeToString(caPEM) + "\n    server: https://10.0.0.13:6443\n  name: \"\"\n"
	b, _ := json.Marshal(map[string]any{"kind": "ConfigMap", "data": map[string]string{"kubeconfig": kc}})
	return b
}

// TestAPIServerClockReadsTheMastersDate: the master's time is the Date of
// its API server's answer, taken only from a server whose certificate the
// published CA signed.
func TestAPIServerClockReadsTheMastersDate(t *testing.T) {
	t.Parallel()
	masterNow := time.Date(2026, 11, 22, 3, 4, 5, 0, time.UTC)
	var body []byte
	status := http.StatusOK
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != clusterInfoPath || r.Header.Get("Authorization") != "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Date", masterNow.Format(http.TimeFormat))
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	api := netip.MustParseAddrPort(srv.Listener.Addr().String())
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	hash, err := kubeadm.CACertHash(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	otherCA, otherHash := testCA(t)
	for name, c := range map[string]struct {
		body    []byte
		status  int
		hash    string
		wantErr string
	}{
		"the cluster's server":     {clusterInfo(caPEM), 200, hash, ""},
		"another hash":             {clusterInfo(caPEM), 200, otherHash, "does not match the published hash"},
		"a CA that did not sign":   {clusterInfo(otherCA), 200, otherHash, "serving certificate is not the cluster CA's"},
		"anonymous access refused": {[]byte(`{"kind":"Status"}`), 403, hash, "answered 403"},
		"no kubeconfig":            {[]byte(`{"data":{}}`), 200, hash, "no kubeconfig"},
	} {
		body, status = c.body, c.status
		got, err := APIServerClock{Timeout: 5 * time.Second}.MasterNow(context.Background(), api, c.hash)
		switch {
		case c.wantErr == "" && (err != nil || !got.Equal(masterNow)):
			t.Errorf("%s: %v, %v; want %v", name, got, err, masterNow)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: %v, want an error saying %q", name, err, c.wantErr)
		}
	}
}

// TestAPIServerClockIsBounded: a server that never answers costs the
// timeout, not a hang.
func TestAPIServerClockIsBounded(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	start := time.Now()
	_, err := APIServerClock{Timeout: 200 * time.Millisecond}.MasterNow(context.Background(), netip.MustParseAddrPort(srv.Listener.Addr().String()), strings.Repeat("ab", 32))
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("%v after %s", err, time.Since(start))
	}
}
