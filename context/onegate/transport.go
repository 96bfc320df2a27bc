package onegate

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// TProxyAddr is the link-local address of OpenNebula's transparent OneGate
// proxy (6.10+). It is only reachable directly from the guest, so a proxy
// from the environment must never be used for it.
const TProxyAddr = "169.254.16.9"

// proxyFromEnvironment is overridable in tests, which cannot change the
// process environment once http.ProxyFromEnvironment has cached it.
var proxyFromEnvironment = http.ProxyFromEnvironment

// proxyFor honours HTTP(S)_PROXY and NO_PROXY, except for the transparent
// proxy address.
func proxyFor(req *http.Request) (*url.URL, error) {
	if req.URL.Hostname() == TProxyAddr {
		return nil, nil
	}
	return proxyFromEnvironment(req)
}

// newHTTPClient builds the client used when Config.HTTPClient is nil: the
// usual transport settings, proxies as above, and TLS from cfg. Request
// deadlines come from the context each request carries, not from here.
func newHTTPClient(cfg Config) (*http.Client, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" || len(cfg.CAPEM) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, fmt.Errorf("reading CA file: %w", err)
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("CA file %s: no PEM certificate in it", cfg.CAFile)
			}
		}
		if len(cfg.CAPEM) > 0 && !pool.AppendCertsFromPEM(cfg.CAPEM) {
			return nil, errors.New("CA bundle: no PEM certificate in it")
		}
		tlsConf.RootCAs = pool
	}
	// The official client skips verification (VERIFY_NONE); here it is an
	// explicit choice of the operator.
	tlsConf.InsecureSkipVerify = cfg.InsecureSkipVerify //nolint:gosec // opt-in

	tr := &http.Transport{
		Proxy:               proxyFor,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 4,
		ForceAttemptHTTP2:   true,
	}
	return &http.Client{Transport: tr}, nil
}
