package lb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// readyzServerName is verified in every API server's certificate,
// whichever address it is reached on: kubeadm puts "kubernetes" in the
// serving certificate of each (cmd/kubeadm/app/util/pkiutil/
// pki_helpers.go GetAPIServerAltNames), while a seed address from
// OneGate may be a NIC the certificate does not name.
const readyzServerName = "kubernetes"

// prober asks each API server GET /readyz over TLS, the cluster CA
// pinned: ready is 200 "ok"; an API server that accepts connections but
// lost etcd answers 500. Anonymous clients may read /readyz (the
// system:public-info-viewer role, bound to system:unauthenticated in
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go), so no
// credential is needed. Until the CA exists (first boot, before kubeadm
// wrote it) the probe is a TCP connect; the file is watched, so a CA
// written or replaced later (a new cluster) is pinned from the next probe.
type prober struct {
	caFile string
	log    *slog.Logger

	mu     sync.Mutex
	seen   caStamp
	client *http.Client // nil: no usable CA, TCP connect
}

type caStamp struct {
	mod  time.Time
	size int64
}

func (b *Balancer) prober() *prober {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probes == nil {
		b.probes = &prober{caFile: b.CAFile, log: b.log()}
	}
	return b.probes
}

// probe returns nil for a ready backend; a *notReadyError for one that
// answers but is not ready (or whose answer cannot be trusted); any other
// error for one that cannot be reached.
func (p *prober) probe(ctx context.Context, addr string) error {
	c := p.current()
	if c == nil {
		return tcpProbe(ctx, addr)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return err // nothing listens, or the host is gone
		}
		return notReady("GET /readyz: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusUnauthorized, http.StatusForbidden:
		// Anonymous requests turned off (--anonymous-auth=false): the
		// server answers, but its readiness is not ours to read.
		return nil
	}
	return notReady("GET /readyz: %d %s", resp.StatusCode, failedChecks(body))
}

// failedChecks picks readyz's "[-]etcd failed: reason withheld" lines.
func failedChecks(body []byte) string {
	var out []string
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "[-]") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	if len(out) == 0 {
		first, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
		return first
	}
	return strings.Join(out, "; ")
}

// current is the HTTPS client pinned to the CA file as it is now, or nil
// while there is no usable CA.
func (p *prober) current() *http.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.caFile == "" {
		return nil
	}
	fi, err := os.Stat(p.caFile)
	if err != nil {
		if p.client != nil {
			p.log.Warn("the cluster CA is gone; probing the API servers with a TCP connect", "ca", p.caFile, "error", err)
		}
		p.use(nil)
		p.seen = caStamp{}
		return nil
	}
	st := caStamp{fi.ModTime(), fi.Size()}
	if st == p.seen {
		return p.client
	}
	p.seen = st
	pem, err := os.ReadFile(p.caFile)
	pool := x509.NewCertPool()
	if err != nil || !pool.AppendCertsFromPEM(pem) {
		// Half written, say: the next change of the file is read again.
		p.log.Warn("the cluster CA file holds no certificate; probing the API servers with a TCP connect", "ca", p.caFile, "error", err)
		p.use(nil)
		return nil
	}
	p.use(&http.Client{Transport: &http.Transport{
		Proxy:       nil, // the masters are on the cluster's network, never behind the node's proxy
		DialContext: (&net.Dialer{}).DialContext,
		TLSClientConfig: &tls.Config{
			RootCAs:    pool,
			ServerName: readyzServerName,
			MinVersion: tls.VersionTLS12,
		},
		// One kept-alive connection per master: a handshake every 2 s
		// from every node would cost the masters' CPU.
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}})
	p.log.Info("probing the API servers' /readyz, the cluster CA pinned", "ca", p.caFile)
	return p.client
}

func (p *prober) use(c *http.Client) {
	if p.client != nil {
		p.client.CloseIdleConnections()
	}
	p.client = c
}
