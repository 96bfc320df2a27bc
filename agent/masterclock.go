package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/onekube/onekube/agent/kubeadm"
)

// MasterClock reads the time on a master's clock. A join token's or a
// certificate-key grant's expiry is stamped by the acting master and
// judged by the API server, both on the masters' clocks. Each VM keeps its
// own, and NTP can be missing or late at first boot, so a joining VM never
// compares such a stamp with its own clock: it reads the master's.
type MasterClock interface {
	// MasterNow is the time now on the master whose API server listens
	// at api, for the cluster whose CA hashes to caHash.
	MasterNow(ctx context.Context, api netip.AddrPort, caHash string) (time.Time, error)
}

// APIServerClock is the production MasterClock: the Date header of the API
// server's answer to an anonymous GET of the cluster-info ConfigMap, the
// document kubeadm's token discovery reads and kubeadm's RBAC opens to
// anonymous users (cmd/kubeadm/app/phases/bootstraptoken/clusterinfo/
// clusterinfo.go). The CA it carries must hash to the published hash and
// must have signed the serving certificate, so the Date is that cluster's
// API server's and not a proxy's. The hash comes from a key other VMs of
// the service can write: this is a clock, never trust; kubeadm's discovery
// does the pinning that matters.
type APIServerClock struct {
	// Timeout bounds the whole read; 0 means 5 s.
	Timeout time.Duration
	// Dial connects (tests); nil is a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

const clusterInfoPath = "/api/v1/namespaces/kube-public/configmaps/cluster-info"

// maxClusterInfo bounds the ConfigMap read: a kubeconfig with one CA and
// its JWS signatures is a few KiB.
const maxClusterInfo = 256 << 10

// MasterNow implements MasterClock.
func (c APIServerClock) MasterNow(ctx context.Context, api netip.AddrPort, caHash string) (time.Time, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dial := c.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	hc := &http.Client{
		Transport: &http.Transport{
			Proxy:       nil, // the master's address, never a proxy's clock
			DialContext: dial,
			// Checked below against the CA the answer carries.
			TLSClientConfig:   &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}, //nolint:gosec // verified by hand below
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	url := "https://" + api.String() + clusterInfoPath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return time.Time{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the master's clock: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return time.Time{}, fmt.Errorf("reading the master's clock: GET %s answered %d", clusterInfoPath, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxClusterInfo))
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the master's clock: %w", err)
	}
	if err := servedByCluster(resp.TLS, body, caHash); err != nil {
		return time.Time{}, fmt.Errorf("reading the master's clock at %s: %w", api, err)
	}
	at, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the master's clock at %s: no Date header", api)
	}
	return at, nil
}

// servedByCluster checks that the answer came from an API server of the
// cluster whose CA hashes to caHash.
func servedByCluster(cs *tls.ConnectionState, clusterInfo []byte, caHash string) error {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return errors.New("no serving certificate")
	}
	caPEM, err := clusterInfoCA(clusterInfo)
	if err != nil {
		return err
	}
	got, err := kubeadm.CACertHash(caPEM)
	if err != nil {
		return fmt.Errorf("cluster-info: %w", err)
	}
	if got != caHash {
		return errors.New("cluster-info's CA does not match the published hash")
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return fmt.Errorf("the serving certificate is not the cluster CA's: %w", err)
	}
	return nil
}

// clusterInfoCA is the CA of the kubeconfig in the cluster-info ConfigMap.
func clusterInfoCA(b []byte) ([]byte, error) {
	var cm struct {
		Data struct {
			Kubeconfig string `json:"kubeconfig"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &cm); err != nil || cm.Data.Kubeconfig == "" {
		return nil, errors.New("cluster-info holds no kubeconfig")
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				CA []byte `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data.Kubeconfig), &kc); err != nil || len(kc.Clusters) == 0 || len(kc.Clusters[0].Cluster.CA) == 0 {
		return nil, errors.New("cluster-info's kubeconfig holds no CA")
	}
	return kc.Clusters[0].Cluster.CA, nil
}
