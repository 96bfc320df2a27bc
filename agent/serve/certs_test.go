package serve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/safetext"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// testPKI writes a kubeadm-like master under a temp root: a CA, leaf
// certificates in pki/ and pki/etcd/, kubeconfigs with embedded client
// certificates, and the four static-pod manifests.
type testPKI struct {
	root  system.Root
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
}

var (
	pkiLeaves  = []string{"apiserver", "apiserver-kubelet-client", "front-proxy-client", "apiserver-etcd-client", "etcd/server", "etcd/peer", "etcd/healthcheck-client"}
	pkiConfigs = []string{"admin.conf", "super-admin.conf", "controller-manager.conf", "scheduler.conf"}
)

func newTestPKI(t *testing.T, notAfter time.Time) *testPKI {
	t.Helper()
	p := &testPKI{root: system.Root(t.TempDir())}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"}, NotBefore: notAfter.Add(-24 * time.Hour),
		NotAfter: notAfter.Add(10 * 365 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caKey = key
	for _, ca := range []string{"ca", "etcd/ca", "front-proxy-ca"} {
		p.write(t, PKIDir+"/"+ca+".crt", pemCert(der), 0o644)
	}
	p.renew(t, notAfter)
	for _, m := range ControlPlaneManifests {
		p.write(t, ManifestsDir+"/"+m, []byte(testManifest(m)), 0o600)
	}
	return p
}

func (p *testPKI) write(t *testing.T, rel string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := p.root.WriteFile(rel, b, mode); err != nil {
		t.Fatal(err)
	}
}

// renew (re)writes every leaf to expire at notAfter, as kubeadm certs
// renew all does.
func (p *testPKI) renew(t *testing.T, notAfter time.Time) {
	for i, name := range append(append([]string{}, pkiLeaves...), pkiConfigs...) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(100 + i)), Subject: pkix.Name{CommonName: name},
			NotBefore: p.ca.NotBefore, NotAfter: notAfter, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(name, ".conf") {
			p.write(t, PKIDir+"/"+name+".crt", pemCert(der), 0o644)
			continue
		}
		kb, _ := x509.MarshalECPrivateKey(key)
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["k"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
		cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: pemCert(der),
			ClientKeyData: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})}
		cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "k", AuthInfo: "u"}
		cfg.CurrentContext = "c"
		b, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		p.write(t, "/etc/kubernetes/"+name, b, 0o600)
	}
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// testManifest is a static pod whose probe port names the manifest, so the
// fake kubelet below can tell which pod a probe asks about.
// testManifest is shaped as kubeadm writes it: the probe names its port.
func testManifest(name string) string {
	port := map[string]string{"etcd.yaml": "2381", "kube-apiserver.yaml": "6443", "kube-controller-manager.yaml": "10257", "kube-scheduler.yaml": "10259"}[name]
	return `apiVersion: v1
kind: Pod
metadata:
  name: ` + strings.TrimSuffix(name, ".yaml") + `
spec:
  hostNetwork: true
  containers:
  - name: c
    image: x
    ports:
    - containerPort: ` + port + `
      name: probe-port
    startupProbe:
      httpGet:
        host: 127.0.0.1
        port: probe-port
        path: /livez
        scheme: HTTPS
`
}

// fakeKubelet answers probes: a pod is up while its manifest is in the
// manifests directory (unless stuck, or broken), and records the order of
// stops and starts.
type fakeKubelet struct {
	root   system.Root
	mu     sync.Mutex
	events []string
	up     map[string]bool
	stuck  string // never stops
	broken string // never comes back
}

func newFakeKubelet(root system.Root) *fakeKubelet {
	up := map[string]bool{}
	for _, m := range ControlPlaneManifests {
		up[strings.TrimSuffix(m, ".yaml")] = true
	}
	return &fakeKubelet{root: root, up: up}
}

func (k *fakeKubelet) health(_ context.Context, url string) error {
	name := map[string]string{"2381": "etcd", "6443": "kube-apiserver", "10257": "kube-controller-manager", "10259": "kube-scheduler"}[strings.Split(strings.Split(url, ":")[2], "/")[0]]
	ok, _ := k.root.Exists(ManifestsDir + "/" + name + ".yaml")
	k.mu.Lock()
	defer k.mu.Unlock()
	if name == k.stuck {
		ok = true
	}
	if name == k.broken && len(k.events) > 0 {
		ok = false
	}
	if was, seen := k.up[name]; seen && was != ok {
		k.events = append(k.events, map[bool]string{true: "start ", false: "stop "}[ok]+name)
	}
	k.up[name] = ok
	if !ok {
		return errors.New("connection refused")
	}
	return nil
}

// fakeRenewer renews a testPKI to a new expiry, optionally blocking until
// released, or failing.
type fakeRenewer struct {
	t       *testing.T
	pki     *testPKI
	to      time.Time
	err     error
	calls   int
	entered chan struct{}
	release chan struct{}
}

func (r *fakeRenewer) RenewAll(context.Context) error {
	r.calls++
	if r.entered != nil {
		close(r.entered)
		<-r.release
	}
	if r.err != nil {
		return r.err
	}
	r.pki.renew(r.t, r.to)
	return nil
}

// certsOneGate is this VM's USER_TEMPLATE in memory.
type certsOneGate struct {
	agent.OneGate
	mu sync.Mutex
	ut map[string]string
}

func (f *certsOneGate) GetVM(context.Context) (*onegate.VM, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ut := map[string]string{}
	for k, v := range f.ut {
		ut[k] = v
	}
	return &onegate.VM{ID: 7, UserTemplate: ut}, nil
}

func (f *certsOneGate) UpdateVM(_ context.Context, kvs ...onegate.KV) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	// As the real client does (onegate.EncodeUpdate): a value OneGate
	// cannot store is refused, and nothing is written.
	for _, kv := range kvs {
		if err := onegate.CheckValue(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	for _, kv := range kvs {
		f.ut[kv.Key] = kv.Value
	}
	return nil
}

func (f *certsOneGate) EraseVMKey(_ context.Context, k string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ut, k)
	return nil
}

func (f *certsOneGate) get(k string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ut[k]
}

var certsT0 = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

// newTestCerts is one master: its PKI expiring at notAfter, a fake
// kubelet, a renewer to certsT0+1y, on a clock at certsT0.
func newTestCerts(t *testing.T, id string, notAfter time.Time, cs *fake.Clientset, clock *systemtest.Clock) (*Certs, *fakeKubelet, *fakeRenewer, *certsOneGate) {
	t.Helper()
	p := newTestPKI(t, notAfter)
	k := newFakeKubelet(p.root)
	r := &fakeRenewer{t: t, pki: p, to: certsT0.Add(365 * 24 * time.Hour)}
	og := &certsOneGate{ut: map[string]string{}}
	c := &Certs{Root: p.root, Client: cs, OneGate: og, Renewer: r, Clock: clock, Identity: id,
		Pods: &StaticPods{Root: p.root, Clock: clock, Health: k.health, Poll: time.Millisecond}}
	return c, k, r, og
}

func TestReadLeafCerts(t *testing.T) {
	t.Parallel()
	p := newTestPKI(t, certsT0)
	// One leaf sooner than the rest, in a kubeconfig.
	soon := newTestPKI(t, certsT0.Add(-time.Hour))
	b, _ := soon.root.ReadFile("/etc/kubernetes/scheduler.conf")
	p.write(t, "/etc/kubernetes/scheduler.conf", b, 0o600)

	leaves, err := ReadLeafCerts(p.root)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(pkiLeaves) + len(pkiConfigs); len(leaves) != want {
		t.Errorf("read %d leaves, want %d (CAs left out): %v", len(leaves), want, leaves)
	}
	if leaves[0].Path != "/etc/kubernetes/scheduler.conf" || !leaves[0].NotAfter.Equal(certsT0.Add(-time.Hour)) {
		t.Errorf("earliest = %+v, want scheduler.conf at %s", leaves[0], certsT0.Add(-time.Hour))
	}

	// super-admin.conf exists only where kubeadm init ran.
	if err := os.Remove(p.root.Path("/etc/kubernetes/super-admin.conf")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLeafCerts(p.root); err != nil {
		t.Errorf("a joined master (no super-admin.conf): %v", err)
	}

	for name, tc := range map[string]struct{ file, body string }{
		"garbage leaf":       {PKIDir + "/apiserver.crt", "not a certificate"},
		"garbage kubeconfig": {"/etc/kubernetes/admin.conf", "{{{"},
	} {
		q := newTestPKI(t, certsT0)
		q.write(t, tc.file, []byte(tc.body), 0o600)
		if _, err := ReadLeafCerts(q.root); err == nil || !strings.Contains(err.Error(), tc.file) {
			t.Errorf("%s: err = %v, want one naming %s", name, err, tc.file)
		}
	}
	if _, err := ReadLeafCerts(system.Root(t.TempDir())); err == nil {
		t.Error("an empty root has no leaves, want an error")
	}
}

func FuzzParseLeafPEM(f *testing.F) {
	p := newTestPKI(&testing.T{}, certsT0)
	b, _ := p.root.ReadFile(PKIDir + "/apiserver.crt")
	f.Add(b)
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseLeafPEM(b)
		if err == nil && c != nil && c.IsCA {
			t.Error("a CA came back as a leaf")
		}
	})
}

func TestCertsDecide(t *testing.T) {
	t.Parallel()
	now := certsT0
	before := 30 * 24 * time.Hour
	free := leaseView{Reachable: true}
	mine := leaseView{Reachable: true, Holder: "m1", Expires: now.Add(time.Minute)}
	theirs := leaseView{Reachable: true, Holder: "m2", Expires: now.Add(time.Minute)}
	stale := leaseView{Reachable: true, Holder: "m2", Expires: now.Add(-time.Second)}
	down := leaseView{}
	for _, tc := range []struct {
		name    string
		left    time.Duration
		pending bool
		lease   leaseView
		want    certAction
	}{
		{"outside the threshold", 31 * 24 * time.Hour, false, free, certsIdle},
		{"outside the threshold, other holder", 31 * 24 * time.Hour, false, theirs, certsIdle},
		{"at the threshold", before, false, free, certsRenew},
		{"within, lease free", 10 * 24 * time.Hour, false, free, certsRenew},
		{"within, lease mine", 10 * 24 * time.Hour, false, mine, certsRenew},
		{"within, another master renews", 10 * 24 * time.Hour, false, theirs, certsWait},
		{"within, another master's lease lapsed", 10 * 24 * time.Hour, false, stale, certsRenew},
		{"expired, another master renews", -time.Hour, false, theirs, certsWait},
		{"within, no API, not urgent", 10 * 24 * time.Hour, false, down, certsWaitForAPIs},
		{"no API, an hour left", time.Hour, false, down, certsRenewAlone},
		{"no API, expired", -24 * time.Hour, false, down, certsRenewAlone},
		{"restart pending, far expiry", 300 * 24 * time.Hour, true, free, certsRenew},
		{"restart pending, another master renews", 300 * 24 * time.Hour, true, theirs, certsWait},
		{"restart pending, no API", 300 * 24 * time.Hour, true, down, certsWaitForAPIs},
	} {
		if got := decideCerts(now, now.Add(tc.left), before, tc.pending, tc.lease, "m1"); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// A short threshold (a test cluster) renews alone within a quarter of it.
	if got := decideCerts(now, now.Add(time.Minute), 8*time.Minute, false, down, "m1"); got != certsRenewAlone {
		t.Errorf("8m threshold, 1m left, no API: %s", got)
	}
}

// Within the threshold a master renews, restarts its static pods one at a
// time (etcd first, each stopped and started before the next), publishes
// the new expiry, and frees the lease.
func TestCertsRenewsWithinThreshold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := systemtest.NewClock(certsT0)
	cs := fake.NewClientset()
	c, k, r, og := newTestCerts(t, "m1", certsT0.Add(20*24*time.Hour), cs, clock)

	next, err := c.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.calls != 1 {
		t.Fatalf("renewed %d times, want 1", r.calls)
	}
	want := "stop etcd,start etcd,stop kube-apiserver,start kube-apiserver,stop kube-controller-manager,start kube-controller-manager,stop kube-scheduler,start kube-scheduler"
	if got := strings.Join(k.events, ","); got != want {
		t.Errorf("restarts:\n got %s\nwant %s", got, want)
	}
	if got, want := og.get(vmcontext.KeyPubCerts), CertsValue(r.to, certsT0); got != want {
		t.Errorf("published %q, want %q", got, want)
	}
	if got := og.get(vmcontext.KeyPubCertsError); got != "" {
		t.Errorf("error published after success: %q", got)
	}
	if v := (certLease{client: cs}).view(ctx); v.Holder != "" {
		t.Errorf("lease still held by %q", v.Holder)
	}
	if ok, _ := c.Root.Exists(CertsRestartFile); ok {
		t.Error("restart still marked pending")
	}
	if next != c.Every {
		t.Errorf("next = %s, want %s", next, c.Every)
	}
	// The next tick is idle; it waits until the threshold, at most Every.
	r.calls = 0
	if _, err := c.Tick(ctx); err != nil || r.calls != 0 || c.report.State != string(certsIdle) {
		t.Errorf("second tick: err %v, renewals %d, state %s", err, r.calls, c.report.State)
	}
}

// Outside the threshold nothing renews; the expiry is published with
// "renewed=never", and the next tick is due when the threshold is reached.
func TestCertsIdleOutsideThreshold(t *testing.T) {
	t.Parallel()
	clock := systemtest.NewClock(certsT0)
	c, k, r, og := newTestCerts(t, "m1", certsT0.Add(30*24*time.Hour+10*time.Minute), fake.NewClientset(), clock)
	next, err := c.Tick(context.Background())
	if err != nil || r.calls != 0 || len(k.events) != 0 {
		t.Fatalf("err %v, renewals %d, restarts %v", err, r.calls, k.events)
	}
	if next != 10*time.Minute {
		t.Errorf("next = %s, want the 10m left before the threshold", next)
	}
	if got, want := og.get(vmcontext.KeyPubCerts), "expires=2027-01-31T00:10:00Z renewed=never"; got != want {
		t.Errorf("published %q, want %q", got, want)
	}
}

// Two masters due at once: while one renews (holding the lease), the other
// waits; it renews after the first is done.
func TestCertsNeverTwoMastersAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := systemtest.NewClock(certsT0)
	cs := fake.NewClientset()
	a, _, ra, _ := newTestCerts(t, "m1", certsT0.Add(time.Hour*24), cs, clock)
	b, kb, rb, _ := newTestCerts(t, "m2", certsT0.Add(time.Hour*24), cs, clock)
	ra.entered, ra.release = make(chan struct{}), make(chan struct{})

	done := make(chan error)
	go func() { _, err := a.Tick(ctx); done <- err }()
	<-ra.entered
	next, err := b.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rb.calls != 0 || len(kb.events) != 0 || b.report.State != string(certsWait) {
		t.Fatalf("m2 acted while m1 renewed: renewals %d, restarts %v, state %s", rb.calls, kb.events, b.report.State)
	}
	if next != certsWaitTick {
		t.Errorf("m2 next = %s, want %s", next, certsWaitTick)
	}
	close(ra.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := b.Tick(ctx); err != nil || rb.calls != 1 {
		t.Errorf("m2 after m1: err %v, renewals %d", err, rb.calls)
	}
}

// A renewal that fails is published, and logged at error level once the
// expiry is within a week; the next good tick erases it.
func TestCertsFailureIsLoud(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		left time.Duration
		loud bool
	}{
		{"within the threshold, weeks left", 20 * 24 * time.Hour, false},
		{"six days left", 6 * 24 * time.Hour, true},
		{"expired", -time.Hour, true},
	} {
		clock := systemtest.NewClock(certsT0)
		c, _, r, og := newTestCerts(t, "m1", certsT0.Add(tc.left), fake.NewClientset(), clock)
		var logs bytes.Buffer
		c.Log = slog.New(slog.NewTextHandler(&logs, nil))
		// Errors quote and span lines (kubeadm's output, a manifest's
		// port name): OneGate stores none of that as is.
		r.err = errors.New("exit status 1: unable to sign: \"ca.key\" missing\n[certs] a, b\\c")
		_, err := c.Tick(ctx)
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		if got := og.get(vmcontext.KeyPubCertsError); !strings.Contains(got, "ca.key' missing") {
			t.Errorf("%s: published error %q; tick: %v", tc.name, got, err)
		}
		if strings.Contains(err.Error(), "publishing") {
			t.Errorf("%s: the error was not published: %v", tc.name, err)
		}
		if loud := strings.Contains(logs.String(), "level=ERROR"); loud != tc.loud {
			t.Errorf("%s: logged at error level: %v, want %v\n%s", tc.name, loud, tc.loud, logs.String())
		}
		r.err = nil
		if _, err := c.Tick(ctx); err != nil {
			t.Fatalf("%s: retry: %v", tc.name, err)
		}
		if got := og.get(vmcontext.KeyPubCertsError); got != "" {
			t.Errorf("%s: error still published after success: %q", tc.name, got)
		}
	}
}

// A static pod that does not come back fails the tick with the reason, its
// manifest back in place; the restart stays pending and is retried under
// the lease even though the certificates no longer look due.
func TestCertsRestartFailureRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := systemtest.NewClock(certsT0)
	c, k, r, og := newTestCerts(t, "m1", certsT0.Add(24*time.Hour), fake.NewClientset(), clock)
	c.Pods.UpWait = time.Second
	k.broken = "kube-apiserver"
	_, err := c.Tick(ctx)
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver.yaml is not healthy") {
		t.Fatalf("err = %v", err)
	}
	if ok, _ := c.Root.Exists(ManifestsDir + "/kube-apiserver.yaml"); !ok {
		t.Error("the apiserver manifest was not put back")
	}
	if got := og.get(vmcontext.KeyPubCertsError); !strings.Contains(got, "kube-apiserver") {
		t.Errorf("published error %q", got)
	}
	k.mu.Lock()
	k.broken, k.events = "", nil
	for n := range k.up {
		k.up[n] = true
	}
	k.mu.Unlock()
	if _, err := c.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if r.calls != 1 {
		t.Errorf("renewed %d times, want 1 (the retry only restarts)", r.calls)
	}
	if len(k.events) != 8 {
		t.Errorf("retry restarts: %v", k.events)
	}
	if got := og.get(vmcontext.KeyPubCertsError); got != "" {
		t.Errorf("error still published: %q", got)
	}
}

// A kubelet that does not stop the pod: the manifest is put back and the
// error says so. A manifest left held by a dead serve is put back first.
func TestStaticPodsRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newTestPKI(t, certsT0)
	k := newFakeKubelet(p.root)
	k.stuck = "etcd"
	clock := systemtest.NewClock(certsT0)
	s := &StaticPods{Root: p.root, Clock: clock, Health: k.health, Poll: time.Second, DownWait: 5 * time.Second}
	err := s.Restart(ctx, "etcd.yaml")
	if err == nil || !strings.Contains(err.Error(), "did not stop etcd.yaml") {
		t.Fatalf("err = %v", err)
	}
	if ok, _ := p.root.Exists(ManifestsDir + "/etcd.yaml"); !ok {
		t.Error("etcd.yaml not put back")
	}

	if err := p.root.MkdirAll(HeldManifestsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p.root.Path(ManifestsDir+"/kube-scheduler.yaml"), p.root.Path(HeldManifestsDir+"/kube-scheduler.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.root.Exists(ManifestsDir + "/kube-scheduler.yaml"); !ok {
		t.Error("a held manifest was not recovered")
	}
	if left, _ := filepath.Glob(p.root.Path(HeldManifestsDir + "/*")); len(left) != 0 {
		t.Errorf("held manifests left: %v", left)
	}
}

func TestProbeURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, manifest, want, err string }{
		{"kubeadm apiserver", testManifest("kube-apiserver.yaml"), "https://127.0.0.1:6443/livez", ""},
		{"no host, http, no slash", "spec:\n  containers:\n  - livenessProbe:\n      httpGet:\n        port: 2381\n        path: health\n", "http://127.0.0.1:2381/health", ""},
		{"readiness before liveness", "spec:\n  containers:\n  - livenessProbe:\n      httpGet: {port: 1, path: /a}\n    readinessProbe:\n      httpGet: {port: 2, path: /b}\n", "http://127.0.0.1:2/b", ""},
		{"ipv6 host", "spec:\n  containers:\n  - startupProbe:\n      httpGet: {host: 'fd00::1', port: 6443, path: /livez, scheme: HTTPS}\n", "https://[fd00::1]:6443/livez", ""},
		{"named port", "spec:\n  containers:\n  - ports: [{name: probe-port, containerPort: 2381}]\n    startupProbe:\n      httpGet: {port: probe-port, path: /x}\n", "http://127.0.0.1:2381/x", ""},
		{"named port not declared", "spec:\n  containers:\n  - ports: [{name: other, containerPort: 1}]\n    startupProbe:\n      httpGet: {port: probe-port, path: /x}\n", "", "names no port"},
		{"port out of range", "spec:\n  containers:\n  - startupProbe:\n      httpGet: {port: 70000, path: /x}\n", "", "not a TCP port"},
		{"exec probe only", "spec:\n  containers:\n  - livenessProbe:\n      exec: {command: ['true']}\n", "", "no HTTP probe"},
		{"no container", "spec: {}\n", "", "no container"},
		{"not yaml", "{{", "", "parsing"},
	} {
		got, err := ProbeURL([]byte(tc.manifest))
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %q, %v; want %q, %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// The manifests the real kubeadm (v1.37.2) wrote on a test-bed master:
// every probe names its port "probe-port", declared among the
// container's ports. Found on the bed: a numeric-only reading failed every
// restart after a renewal.
func TestProbeURLKubeadmManifests(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"etcd.yaml":                    "http://127.0.0.1:2381/readyz",
		"kube-apiserver.yaml":          "https://192.0.2.2:6443/livez",
		"kube-controller-manager.yaml": "https://127.0.0.1:10257/healthz",
		"kube-scheduler.yaml":          "https://127.0.0.1:10259/livez",
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "manifests", name))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ProbeURL(b); got != want || err != nil {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}

func FuzzProbeURL(f *testing.F) {
	f.Add([]byte(testManifest("etcd.yaml")))
	f.Add([]byte("spec:\n  containers:\n  - startupProbe:\n      httpGet: {port: 0, path: ''}\n"))
	f.Add([]byte("{{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := ProbeURL(b)
		if err == nil && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			t.Errorf("URL %q", u)
		}
	})
}

// Whatever an error says, OneGate can store what is published of it.
func FuzzCertsErrorText(f *testing.F) {
	for _, s := range []string{"", "plain", "the probe's port \"probe-port\" is not a number", "a\r\nb\n[c], d\\e", "\x00\xff\u2028", strings.Repeat("\"", 500)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := certsErrorText(errors.New(s))
		if err := onegate.CheckValue(vmcontext.KeyPubCertsError, v); err != nil {
			t.Fatalf("%q -> %q: %v", s, v, err)
		}
		if len(v) > 200+safetext.MarkLen {
			t.Fatalf("%d bytes", len(v))
		}
	})
}

// After a renewal the next tick comes when the new leaves are due, not an
// idle hour later: with leaves of an hour or less (ONEAPP_K8S_CERT_VALIDITY)
// an hour's sleep would miss the next renewal. Found on the test bed: leaves
// of 3m45s renewed at 2m15s before expiry, and serve's next look was due an
// hour later.
func TestCertsNextTickAfterRenewal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		renewTo time.Duration // the new leaves' expiry, from now
		before  time.Duration
		want    time.Duration
	}{
		{"leaves of 30 min, threshold 20 min", 30 * time.Minute, 20 * time.Minute, 10 * time.Minute},
		{"leaves of 3m45s, threshold 2m15s", 3*time.Minute + 45*time.Second, 2*time.Minute + 15*time.Second, 90 * time.Second},
		{"a year's leaves: the idle hour", 365 * 24 * time.Hour, DefaultCertRenewBefore, DefaultCertsEvery},
	} {
		clock := systemtest.NewClock(certsT0)
		c, _, r, _ := newTestCerts(t, "m1", certsT0.Add(tc.before/2), fake.NewClientset(), clock)
		c.Before, r.to = tc.before, certsT0.Add(tc.renewTo)
		next, err := c.Tick(ctx)
		if err != nil || r.calls != 1 {
			t.Fatalf("%s: renewed %d times: %v", tc.name, r.calls, err)
		}
		if next != tc.want {
			t.Errorf("%s: next tick in %s, want %s", tc.name, next, tc.want)
		}
	}
}

// Leaves issued for less than the threshold would be renewed on every
// tick: the master renews and restarts once, then says why, published.
func TestCertsLifetimeWithinThresholdIsLoud(t *testing.T) {
	t.Parallel()
	clock := systemtest.NewClock(certsT0)
	c, _, r, og := newTestCerts(t, "m1", certsT0.Add(5*time.Minute), fake.NewClientset(), clock)
	c.Before, r.to = 20*time.Minute, certsT0.Add(10*time.Minute)
	_, err := c.Tick(context.Background())
	if err == nil || !strings.Contains(err.Error(), "within the renewal threshold 20m0s") {
		t.Fatalf("err = %v", err)
	}
	if got := og.get(vmcontext.KeyPubCertsError); !strings.Contains(got, "due again at once") {
		t.Errorf("published error %q", got)
	}
	if ok, _ := c.Root.Exists(CertsRestartFile); ok {
		t.Error("the renewed certificates are not served: restart still pending")
	}
}
