//go:build realbed

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// Certificate lifetimes of TestCertRenewal. The masters' leaves are
// issued within a minute of each other and cross the threshold 90 s after
// init, once all three run serve; the threshold leaves room for three
// renewals in turn (25-40 s each on a loaded bed; waiting masters look
// every 30 s: 1m40s to 1m56s in all) before the last old leaf expires.
// The first master renews a second time before the test ends (its new
// leaves are due 90 s after it renewed), so the last checks may meet a
// master restarting, and retry.
const (
	certsValidity = 3*time.Minute + 45*time.Second
	certsBefore   = 2*time.Minute + 15*time.Second
)

// TestCertRenewal is issue 21's certificate proof on real control planes:
// 3 masters initialised by the real agent with leaves valid for minutes
// (ONEAPP_K8S_CERT_VALIDITY) and a renewal threshold inside that
// (ONEAPP_K8S_CERT_RENEW_BEFORE). Each master's serve renews its leaves,
// admin.conf and super-admin.conf with the real kubeadm, one master at a
// time, and restarts its static pods through the bed's kubelet; the
// expiry and last renewal reach `onekube-flow status`; and after the old
// certificates' NotAfter has passed, the API answers on every master,
// the controller-manager and scheduler still hold their leases, and serve
// still renews its own.
func TestCertRenewal(t *testing.T) {
	// Parallel: most of it waits for leaves to come due, so it runs beside the other
	// long waiter once the serial tests are done (CI time; the bed is its own).
	t.Parallel()
	b := newBed(t)
	s := startServiceWith(t, b, testbed.ServiceOptions{Masters: 3, CNIManifest: flannelManifest, AgentArgs: agentArgs,
		Context: map[string]string{vmcontext.KeyCertValidity: certsValidity.String(), vmcontext.KeyCertRenewBefore: certsBefore.String()}})
	masters := s.Sim.RoleVMs(s.ID, "master")
	sort.Slice(masters, func(i, j int) bool { return masters[i].ID < masters[j].ID })
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range masters {
				t.Logf("onekubed serve on VM %d:\n%s", m.ID, s.Daemon(m.ID, "serve"))
			}
		}
	})
	start := time.Now()
	for _, r := range waitAgents(t, s, 3) {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d: bootstrap exited %d (%v):\n%s", r.VM.ID, r.Code, r.Err, lastLines(r.Output(), 20))
		}
	}
	t.Logf("figure: 3 masters bootstrapped in %s", time.Since(start).Round(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// Before: what the real kubeadm and the files say.
	type leaves struct {
		kubeadm          map[string]time.Time // check-expiration, by name
		earliest, latest time.Time            // every leaf read with crypto/x509
		apiserver        time.Time            // apiserver.crt
	}
	read := func(m onegatesim.VMInfo) leaves {
		t.Helper()
		vm := s.VM(m.ID)
		l := leaves{kubeadm: checkExpiration(t, ctx, vm)}
		all, err := serve.ReadLeafCerts(system.Root(fmt.Sprintf("/proc/%d/root", vm.Pid())))
		if err != nil {
			t.Fatal(err)
		}
		l.earliest, l.latest = all[0].NotAfter, all[len(all)-1].NotAfter
		for _, c := range all {
			if c.Path == serve.PKIDir+"/apiserver.crt" {
				l.apiserver = c.NotAfter
			}
		}
		return l
	}
	old := map[int]leaves{}
	var oldFirst, oldLast time.Time
	for _, m := range masters {
		l := read(m)
		old[m.ID] = l
		if left := time.Until(l.latest); left > certsValidity {
			t.Fatalf("VM %d: a leaf lasts %s more, want at most %s (%s not applied)", m.ID, left.Round(time.Second), certsValidity, vmcontext.KeyCertValidity)
		}
		for _, name := range []string{"admin.conf", "apiserver", "etcd-server", "controller-manager.conf"} {
			if _, ok := l.kubeadm[name]; !ok {
				t.Fatalf("VM %d: kubeadm certs check-expiration lists no %s: %v", m.ID, name, l.kubeadm)
			}
		}
		if oldFirst.IsZero() || l.earliest.Before(oldFirst) {
			oldFirst = l.earliest
		}
		if l.latest.After(oldLast) {
			oldLast = l.latest
		}
	}
	if _, ok := old[masters[0].ID].kubeadm["super-admin.conf"]; !ok {
		t.Fatalf("the initialising master has no super-admin.conf: %v", old[masters[0].ID].kubeadm)
	}
	threshold := oldFirst.Add(-certsBefore)
	t.Logf("old leaves expire between %s and %s; the first master crosses the threshold at %s (in %s)",
		oldFirst.Format(time.TimeOnly), oldLast.Format(time.TimeOnly), threshold.Format(time.TimeOnly), time.Until(threshold).Round(time.Second))

	// Clients asking every 200 ms: each master's API server directly, and
	// the first master's local balancer (the endpoint serve and kubeadm
	// use). They verify the serving certificate against the cluster CA.
	caPEM, err := s.VM(masters[0].ID).ReadFile("/etc/kubernetes/pki/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	pctx, stopPolls := context.WithCancel(ctx)
	defer stopPolls()
	var polls []*poller
	for _, m := range masters {
		polls = append(polls, startPoller(pctx, fmt.Sprintf("VM %d's API server", m.ID), net.JoinHostPort(m.IP.String(), "6443"), caPEM, b.DialContext))
	}
	polls = append(polls, startPoller(pctx, fmt.Sprintf("VM %d's local balancer", masters[0].ID), vmcontext.LocalBalancer, caPEM, s.VM(masters[0].ID).DialContext))

	// Every master renews, before its old leaves expire.
	var last time.Time
	waitUntil(t, time.Until(oldLast), "every master to renew and restart its static pods", func() bool {
		last = time.Time{}
		for _, m := range masters {
			rs := renewalsOf(s.Daemon(m.ID, "serve"))
			if len(rs) == 0 {
				return false
			}
			last = maxTime(last, rs[0].end)
		}
		return true
	})
	for _, m := range masters {
		log := s.Daemon(m.ID, "serve")
		if n := strings.Count(log, "another master renews first"); n > 0 {
			t.Logf("VM %d has found the lease held %d times so far", m.ID, n)
		}
		w := renewalsOf(log)[0]
		t.Logf("figure: VM %d renewed %s after the first threshold, its static pods back %s later", m.ID,
			w.start.Sub(threshold).Round(100*time.Millisecond), w.end.Sub(w.start).Round(100*time.Millisecond))
	}
	t.Logf("figure: first threshold crossed to every master renewed: %s", last.Sub(threshold).Round(100*time.Millisecond))

	// After: kubeadm and the files agree every leaf is new, and each API
	// server serves its new certificate (fakenode restarted it).
	newLeaves := map[int]leaves{}
	for _, m := range masters {
		o, l := old[m.ID], read(m)
		newLeaves[m.ID] = l
		if !l.earliest.After(o.latest) {
			t.Errorf("VM %d: a leaf still expires at %s (the old ones at %s)", m.ID, l.earliest, o.latest)
		}
		for name, was := range o.kubeadm {
			if now, ok := l.kubeadm[name]; !ok || !now.After(was) {
				t.Errorf("VM %d: kubeadm certs check-expiration: %s expires %s, before renewal %s", m.ID, name, now, was)
			}
		}
		if p := polls[indexOf(masters, m.ID)]; !p.served().After(o.apiserver) {
			t.Errorf("VM %d's API server serves a certificate expiring %s, the old apiserver.crt's expiry: not restarted", m.ID, p.served())
		}
	}

	// onekube-flow status shows each master's expiry and last renewal.
	env := flowEnv(t, b, s)
	waitUntil(t, 30*time.Second, "onekube-flow status to show every renewal", func() bool {
		code, out, _ := onSwitch(t, b, env, onekubeFlow(t), "status", fmt.Sprint(s.ID))
		if code != 0 && code != 2 {
			t.Logf("onekube-flow status exited %d:\n%s", code, out)
		}
		for _, m := range masters {
			pub := s.Sim.UserTemplate(m.ID)[vmcontext.KeyPubCerts]
			var exp, renewed string
			if _, err := fmt.Sscanf(pub, "expires=%s renewed=%s", &exp, &renewed); err != nil {
				return false
			}
			at, err := time.Parse(time.RFC3339, exp)
			if err != nil || at.Before(newLeaves[m.ID].earliest) || renewed == "never" || !strings.Contains(out, "certificates "+pub) {
				return false
			}
		}
		t.Logf("onekube-flow status:\n%s", out)
		return true
	})

	// The real proof: once every old leaf is past its NotAfter, the API
	// answers through every master, with admin.conf as renewed.
	time.Sleep(time.Until(oldLast) + 2*time.Second)
	after := time.Now()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-renewal", Namespace: "default"}, Data: map[string]string{"at": time.Now().UTC().Format(time.RFC3339)}}
	for i, m := range masters {
		cfg, err := b.RESTConfig(s.VM(m.ID), "/etc/kubernetes/admin.conf")
		if err != nil {
			t.Fatal(err)
		}
		c := kubernetes.NewForConfigOrDie(cfg)
		// Retried: the master may be restarting for a second renewal.
		var err2 error
		waitUntil(t, 45*time.Second, fmt.Sprintf("a call through VM %d after the old leaves expired", m.ID), func() bool {
			if i == 0 {
				_, err2 = c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
			} else {
				_, err2 = c.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{})
			}
			if err2 != nil {
				t.Logf("through VM %d: %v", m.ID, err2)
			}
			return err2 == nil
		})
		if i == len(masters)-1 {
			// The controller-manager and scheduler (controller-manager.conf,
			// scheduler.conf) and serve (admin.conf, reloaded) still renew
			// their leader leases.
			for _, name := range []string{"kube-controller-manager", "kube-scheduler", serve.LeaseName} {
				waitUntil(t, 30*time.Second, name+" to renew its lease after the old leaves expired", func() bool {
					le, err := c.CoordinationV1().Leases("kube-system").Get(ctx, name, metav1.GetOptions{})
					return err == nil && le.Spec.RenewTime != nil && le.Spec.RenewTime.After(oldLast)
				})
			}
		}
	}
	time.Sleep(time.Second)
	stopPolls()
	for _, p := range polls {
		p.wait()
		t.Logf("figure: %s", p.summary())
	}
	// Through the balancer a restarting API server costs one request (its
	// 2 s timeout), not an outage.
	for _, w := range polls[len(polls)-1].windows() {
		if w > 5*time.Second {
			t.Errorf("the local balancer failed for %s in a row", w.Round(100*time.Millisecond))
		}
	}
	t.Logf("API calls through every master after the old leaves expired: %s", time.Since(after).Round(100*time.Millisecond))
	// One master at a time, over every renewal of the test.
	var all []renewal
	for _, m := range masters {
		for _, r := range renewalsOf(s.Daemon(m.ID, "serve")) {
			r.vm = m.ID
			all = append(all, r)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].start.Before(all[j].start) })
	for i := 1; i < len(all); i++ {
		if all[i].start.Before(all[i-1].end) {
			t.Errorf("VM %d started renewing at %s, before VM %d's static pods were back (%s): two masters at once",
				all[i].vm, all[i].start.Format(time.StampMilli), all[i-1].vm, all[i-1].end.Format(time.StampMilli))
		}
	}
	t.Logf("%d renewals in the test, none overlapping", len(all))
	// The first master's new leaves were due again 90 s after it renewed:
	// its serve looked again then, not an idle hour later.
	if n := strings.Count(s.Daemon(all[0].vm, "serve"), `msg="renewing the control-plane certificates"`); n < 2 {
		t.Errorf("VM %d renewed %d time(s); its new leaves were due again %s after its renewal", all[0].vm, n, certsValidity-certsBefore)
	}
	for _, m := range masters {
		log := s.Daemon(m.ID, "serve")
		if i := strings.Index(log, "certificate has expired"); i >= 0 {
			t.Errorf("VM %d's serve met an expired certificate: %s", m.ID, lastLines(log[:i+200], 3))
		}
	}
}

// checkExpiration is `kubeadm certs check-expiration -o json` in vm: the
// expiry of each certificate and kubeconfig present, by kubeadm's name.
func checkExpiration(t *testing.T, ctx context.Context, vm *testbed.VM) map[string]time.Time {
	t.Helper()
	out, err := vm.Run(ctx, "kubeadm", "certs", "check-expiration", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The JSON follows kubeadm's own lines ("[check-expiration] Reading
	// configuration from the cluster...").
	i := strings.Index(out, "{")
	if i < 0 {
		t.Fatalf("kubeadm certs check-expiration printed no JSON:\n%s", out)
	}
	var info struct {
		Certificates []struct {
			Name           string    `json:"name"`
			ExpirationDate time.Time `json:"expirationDate"`
			Missing        bool      `json:"missing"`
		} `json:"certificates"`
	}
	if err := json.NewDecoder(strings.NewReader(out[i:])).Decode(&info); err != nil {
		t.Fatalf("kubeadm certs check-expiration: %v\n%s", err, out)
	}
	m := map[string]time.Time{}
	for _, c := range info.Certificates {
		if !c.Missing {
			m[c.Name] = c.ExpirationDate
		}
	}
	return m
}

// renewal is one master's renewal as its serve logged it.
type renewal struct {
	start, end time.Time
	vm         int
}

// renewalsOf finds the complete renewals in a serve log: from taking the
// lease to the static pods back.
func renewalsOf(log string) []renewal {
	var out []renewal
	var r renewal
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.Contains(line, `msg="renewing the control-plane certificates"`):
			r = renewal{start: logTime(line)}
		case !r.start.IsZero() && strings.Contains(line, `msg="static pods restarted on renewed certificates"`):
			r.end = logTime(line)
			out = append(out, r)
			r = renewal{}
		}
	}
	return out
}

func logTime(line string) time.Time {
	_, rest, ok := strings.Cut(line, "time=")
	if !ok {
		return time.Time{}
	}
	v, _, _ := strings.Cut(rest, " ")
	ts, _ := time.Parse(time.RFC3339Nano, v)
	return ts
}

func indexOf(ms []onegatesim.VMInfo, id int) int {
	for i, m := range ms {
		if m.ID == id {
			return i
		}
	}
	return -1
}

// poller asks GET /readyz every 200 ms on a fresh connection, verifying
// the serving certificate, and records each answer.
type poller struct {
	name string
	mu   sync.Mutex
	at   []time.Time
	ok   []bool
	cert time.Time // NotAfter of the certificate served last
	done chan struct{}
}

func startPoller(ctx context.Context, name, addr string, caPEM []byte, dial func(context.Context, string, string) (net.Conn, error)) *poller {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	host, _, _ := net.SplitHostPort(addr)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext:       dial,
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12},
	}}
	p := &poller{name: name, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			at := time.Now()
			ok, served := false, time.Time{}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/readyz", nil)
			if resp, err := hc.Do(req); err == nil {
				ok = resp.StatusCode == http.StatusOK
				if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
					served = resp.TLS.PeerCertificates[0].NotAfter
				}
				resp.Body.Close()
			}
			if ctx.Err() != nil {
				return
			}
			p.mu.Lock()
			p.at, p.ok = append(p.at, at), append(p.ok, ok)
			if !served.IsZero() {
				p.cert = served
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *poller) wait() { <-p.done }

func (p *poller) served() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cert
}

// windows are the runs of failed requests: from the first failure to the
// next success.
func (p *poller) windows() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Duration
	var from time.Time
	for i, ok := range p.ok {
		switch {
		case !ok && from.IsZero():
			from = p.at[i]
		case ok && !from.IsZero():
			out = append(out, p.at[i].Sub(from))
			from = time.Time{}
		}
	}
	if !from.IsZero() {
		out = append(out, p.at[len(p.at)-1].Sub(from))
	}
	return out
}

func (p *poller) summary() string {
	ws := p.windows()
	p.mu.Lock()
	n, failed := len(p.ok), 0
	for _, ok := range p.ok {
		if !ok {
			failed++
		}
	}
	p.mu.Unlock()
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Round(100 * time.Millisecond).String()
	}
	return fmt.Sprintf("%s: %d of %d requests failed, error windows [%s]", p.name, failed, n, strings.Join(parts, " "))
}
