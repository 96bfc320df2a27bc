package lb

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testCA is a cluster CA and an API server certificate it signed, with
// the names kubeadm gives one ("kubernetes", the advertise address).
type testCA struct {
	pem  []byte
	cert tls.Certificate
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	skey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"master-1", "kubernetes", "kubernetes.default"}, IPAddresses: []net.IP{net.IPv4(192, 0, 2, 10)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, skey.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{
		pem:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: skey},
	}
}

// fakeAPI is an API server as the balancer sees it: /readyz answers
// status (200 "ok" or readyz's 500), /who names it, /watch streams until
// the connection ends.
type fakeAPI struct {
	name   string
	srv    *httptest.Server
	status atomic.Int32
}

func startAPI(t *testing.T, name string, ca testCA) *fakeAPI {
	t.Helper()
	a := &fakeAPI{name: name}
	a.status.Store(http.StatusOK)
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		code := int(a.status.Load())
		w.WriteHeader(code)
		if code == http.StatusOK {
			fmt.Fprint(w, "ok")
			return
		}
		fmt.Fprint(w, "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[+]poststarthook/start-apiextensions-informers ok\nreadyz check failed\n")
	})
	mux.HandleFunc("/who", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, name) })
	mux.HandleFunc("/watch", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, name)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	a.srv = httptest.NewUnstartedServer(mux)
	a.srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.cert}}
	a.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // TCP probes' handshake errors
	a.srv.StartTLS()
	t.Cleanup(func() { a.srv.CloseClientConnections(); a.srv.Close() })
	return a
}

func (a *fakeAPI) addr() string { return strings.TrimPrefix(a.srv.URL, "https://") }

// client talks HTTPS to whichever API server the balancer picks, a new
// connection per request, as kubectl would through 127.0.0.1:6444.
func client(ca testCA, balancer string) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.pem)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", balancer)
		},
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "kubernetes"},
	}}
}

func who(t *testing.T, c *http.Client) string {
	t.Helper()
	resp, err := c.Get("https://kubernetes/who")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return b.String()
}

// writeCA writes the CA file with a modification time of its own, as a
// new file would have.
func writeCA(t *testing.T, path string, pemBytes []byte) {
	t.Helper()
	if err := os.WriteFile(path, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	writes++
	at := time.Unix(1e9+int64(writes), 0)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

var writes int

// TestBalancerSendsNothingToAnUnreadyBackend: an API server that accepts
// connections but answers /readyz with 500 (its etcd gone) is marked down
// on the second such answer in a row and gets no new connection while a
// ready one exists; one that refuses is down at once; a ready answer
// brings it back.
func TestBalancerSendsNothingToAnUnreadyBackend(t *testing.T) {
	ca := newTestCA(t)
	a, bAPI, gone := startAPI(t, "a", ca), startAPI(t, "b", ca), startAPI(t, "gone", ca)
	gone.srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	writeCA(t, caFile, ca.pem)
	lb, addr := startBalancer(t, a.addr(), bAPI.addr(), gone.addr())
	lb.CAFile = caFile
	ctx := context.Background()

	bAPI.status.Store(http.StatusInternalServerError)
	lb.CheckHealth(ctx)
	if h := lb.Backends(); !h[a.addr()] || !h[bAPI.addr()] || h[gone.addr()] {
		t.Fatalf("after one probe: %v; want b still up (one failed readyz), gone down (refused)", h)
	}
	lb.CheckHealth(ctx)
	if h := lb.Backends(); !h[a.addr()] || h[bAPI.addr()] {
		t.Fatalf("after two probes: %v; want a up, b (readyz 500) down", h)
	}
	c := client(ca, addr)
	for range 6 {
		if got := who(t, c); got != "a" {
			t.Fatalf("a new connection went to %q while b is not ready", got)
		}
	}
	bAPI.status.Store(http.StatusOK)
	lb.CheckHealth(ctx)
	if !lb.Backends()[bAPI.addr()] {
		t.Fatal("b is ready again and still marked down")
	}
}

// TestReadyzPinsWhenTheCAAppears: before kubeadm wrote the cluster CA the
// probe is a TCP connect; from the probe after it appears, /readyz over
// TLS with that CA pinned; an API server whose certificate another CA
// signed is not trusted, and a CA replaced (a new cluster) is pinned anew.
func TestReadyzPinsWhenTheCAAppears(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	api := startAPI(t, "a", ca)
	api.status.Store(http.StatusInternalServerError)
	caFile := filepath.Join(t.TempDir(), "pki", "ca.crt")
	var logs lockedLog
	b := &Balancer{CAFile: caFile, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	b.SetBackends([]string{api.addr()})
	ctx := context.Background()
	probe2 := func() bool { b.CheckHealth(ctx); b.CheckHealth(ctx); return b.Backends()[api.addr()] }

	if !probe2() {
		t.Fatal("no CA yet: a backend that accepts TCP is up")
	}
	_ = os.MkdirAll(filepath.Dir(caFile), 0o755)
	writeCA(t, caFile, []byte("-----BEGIN CERTIFICATE-----\nhalf writ"))
	if !probe2() {
		t.Fatal("a CA file with no certificate yet: still a TCP connect")
	}
	writeCA(t, caFile, ca.pem)
	if probe2() {
		t.Fatal("the CA appeared: readyz answers 500, yet the backend is up")
	}
	api.status.Store(http.StatusOK)
	if !probe2() {
		t.Fatal("readyz answers 200 with the CA pinned, yet the backend is down")
	}
	writeCA(t, caFile, other.pem)
	if probe2() {
		t.Fatal("an API server whose certificate the pinned CA did not sign is trusted")
	}
	if err := os.Remove(caFile); err != nil {
		t.Fatal(err)
	}
	if !probe2() {
		t.Fatal("the CA is gone (kubeadm reset): a TCP connect again")
	}
	for _, want := range []string{"the cluster CA pinned", "etcd failed", "certificate", "the cluster CA is gone"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestBalancerClosesConnectionsWhenNotReady: a watch open through the
// balancer to an API server that turns unready is cut, so the client
// reconnects, through the ready one. An API server without etcd serves
// a watch from its cache and never sends another event: kept open, the
// kubelet would stay blind until its own timeout (minutes).
func TestBalancerClosesConnectionsWhenNotReady(t *testing.T) {
	ca := newTestCA(t)
	apis := map[string]*fakeAPI{}
	for _, n := range []string{"a", "b"} {
		apis[n] = startAPI(t, n, ca)
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	writeCA(t, caFile, ca.pem)
	b, addr := startBalancer(t, apis["a"].addr(), apis["b"].addr())
	b.CAFile = caFile
	c := client(ca, addr)
	c.Timeout = 0
	resp, err := c.Get("https://kubernetes/watch")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	on := strings.TrimSpace(line)
	apis[on].status.Store(http.StatusServiceUnavailable)
	b.CheckHealth(context.Background())
	b.CheckHealth(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.ReadString('\n'); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the watch went on")
		}
	case <-time.After(3 * time.Second):
		t.Fatalf("the watch on %s stayed open after it turned unready", on)
	}
	if got := who(t, client(ca, addr)); got == on {
		t.Errorf("reconnected to the unready %s", got)
	}
}

// TestProbe: what each answer of an API server means.
func TestProbe(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	api := startAPI(t, "a", ca)
	stranger := startAPI(t, "s", other)
	gone := startAPI(t, "gone", ca)
	gone.srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	writeCA(t, caFile, ca.pem)
	p := &prober{caFile: caFile, log: slog.New(slog.DiscardHandler)}
	for name, c := range map[string]struct {
		api    *fakeAPI
		status int
		want   string // "up", "not ready", "down"
	}{
		"ready":                             {api, 200, "up"},
		"etcd gone (500)":                   {api, 500, "not ready"},
		"shutting down (503)":               {api, 503, "not ready"},
		"anonymous auth off (401)":          {api, 401, "up"},
		"anonymous may not read (403)":      {api, 403, "up"},
		"a certificate another CA signed":   {stranger, 200, "not ready"},
		"nothing listens (connect refused)": {gone, 200, "down"},
	} {
		c.api.status.Store(int32(c.status))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := p.probe(ctx, c.api.addr())
		cancel()
		var nr *notReadyError
		got := "down"
		switch {
		case err == nil:
			got = "up"
		case errors.As(err, &nr):
			got = "not ready"
		}
		if got != c.want {
			t.Errorf("%s: %s (%v), want %s", name, got, err, c.want)
		}
	}
}

func TestFailedChecks(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"[+]ping ok\n[-]etcd failed: reason withheld\n[-]shutdown failed: reason withheld\nreadyz check failed\n": "[-]etcd failed: reason withheld; [-]shutdown failed: reason withheld",
		"Service Unavailable\nmore": "Service Unavailable",
		"":                          "",
	} {
		if got := failedChecks([]byte(body)); got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}

func FuzzFailedChecks(f *testing.F) {
	f.Add([]byte("[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n"))
	f.Add([]byte("ok"))
	f.Add([]byte("\n\n[-]\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		got := failedChecks(body)
		if strings.Contains(got, "\n") || len(got) > 2*len(body) {
			t.Errorf("%q: %q", body, got)
		}
	})
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
