package access

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/onekube/onekube/context/kubeconfig"
)

// ErrMismatch: an answer that opened fine but is not the credential the
// request asked for. Any VM of the service can write into the master's
// USER_TEMPLATE and seal anything to a public recipient, so this is what a
// forged or replayed answer looks like.
var ErrMismatch = errors.New("does not match the request")

// ErrNotThisCluster: the API server does not accept the credential as the
// user it names, or does not present a certificate of its CA.
var ErrNotThisCluster = errors.New("the credential is not this cluster's")

// CheckPayload checks an opened payload against the request it answers,
// written at sent: same request ID, user and role; a certificate for that
// user with the role's group only, for client auth, signed by the
// payload's CA, valid now for the validity asked (see checkLifetime); and
// a key that is the certificate's. The request sits in the master's
// USER_TEMPLATE, which any VM of the service can rewrite, so what came
// back is compared with what this CLI asked, not with what the master
// read.
func CheckPayload(p kubeconfig.Payload, id string, req kubeconfig.Request, sent, now time.Time) (*x509.Certificate, error) {
	bad := func(format string, a ...any) (*x509.Certificate, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrMismatch}, a...)...)
	}
	if p.ID != id {
		return bad("it answers request %s, not %s", p.ID, id)
	}
	if p.User != req.Name || p.Role != req.Role {
		return bad("it is for %s as %s, not %s as %s", p.User, p.Role, req.Name, req.Role)
	}
	ca, err := parseCert(p.CAPEM)
	if err != nil || !ca.IsCA {
		return bad("its CA is not a CA certificate")
	}
	cert, err := parseCert(p.CertPEM)
	if err != nil {
		return bad("its certificate does not parse")
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		var inv x509.CertificateInvalidError
		if errors.As(err, &inv) && inv.Reason == x509.Expired {
			return nil, fmt.Errorf("%w: the certificate expired at %s (an old answer?)", ErrExpired, cert.NotAfter.UTC().Format(time.RFC3339))
		}
		return bad("its certificate does not verify against its CA: %v", err)
	}
	if cert.Subject.CommonName != req.Name || !slices.Equal(cert.Subject.Organization, []string{kubeconfig.Group(req.Name, req.Role)}) {
		return bad("its certificate names %q in %v", cert.Subject.CommonName, cert.Subject.Organization)
	}
	if !p.NotAfter.Equal(cert.NotAfter) && p.NotAfter.Sub(cert.NotAfter).Abs() >= time.Second {
		return bad("its expiry disagrees with its certificate's")
	}
	if err := checkLifetime(cert, ca, req.TTL, sent, now); err != nil {
		return bad("%v", err)
	}
	key, err := parseKey([]byte(p.Key.Reveal()))
	if err != nil {
		return bad("its key does not parse")
	}
	type publicKey interface{ Equal(crypto.PublicKey) bool }
	if pk, ok := cert.PublicKey.(publicKey); !ok || !pk.Equal(key.Public()) {
		return bad("its key is not the certificate's")
	}
	return cert, nil
}

// checkLifetime compares a certificate's validity with ttl, asked at
// sent. A master starts it kubeconfig.Backdate before its now and ends it
// ttl after (sooner only when the CA itself expires sooner), so:
//   - its length is at most ttl plus the backdate (a minute of slack for
//     rounding), whatever the clocks say;
//   - it ends between sent+ttl and now+ttl, each within
//     kubeconfig.ClockSkew of the master's clock;
//   - it starts no earlier than sent, less the backdate and the skew.
func checkLifetime(cert, ca *x509.Certificate, ttl time.Duration, sent, now time.Time) error {
	const slack = time.Minute
	skew := kubeconfig.ClockSkew
	if long := cert.NotAfter.Sub(cert.NotBefore); long > ttl+kubeconfig.Backdate+slack {
		return fmt.Errorf("its certificate is valid for %s, not the %s asked", long.Round(time.Second), ttl)
	}
	if cert.NotBefore.Before(sent.Add(-kubeconfig.Backdate - skew)) {
		return fmt.Errorf("its certificate started at %s, before the request", cert.NotBefore.UTC().Format(time.RFC3339))
	}
	capped := cert.NotAfter.Equal(ca.NotAfter)
	early, late := sent.Add(ttl-skew), now.Add(ttl+skew)
	if cert.NotAfter.After(late) || (!capped && cert.NotAfter.Before(early)) {
		return fmt.Errorf("its certificate ends at %s, not %s after the request (±%s of clock skew)",
			cert.NotAfter.UTC().Format(time.RFC3339), ttl, skew)
	}
	return nil
}

// ErrExpired: the certificate's validity is over.
var ErrExpired = errors.New("has expired")

func parseCert(b []byte) (*x509.Certificate, error) {
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" || len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("want one PEM certificate")
	}
	return x509.ParseCertificate(blk.Bytes)
}

func parseKey(b []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("no PEM key")
	}
	var k any
	var err error
	switch blk.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	default:
		return nil, errors.New("unsupported key type")
	}
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("not a signing key")
	}
	return s, nil
}

// ErrUnreachable: the API server could not be asked (network, timeout).
var ErrUnreachable = errors.New("cannot reach the API server")

// Whoami asks the API server at server who the credential is, with a
// SelfSubjectReview (authentication.k8s.io/v1, GA in 1.28; every
// authenticated user may create one through system:basic-user). The TLS
// handshake verifies the server against the payload's CA, so this also
// proves the CA is the cluster's: a forged answer with its own CA fails
// here against the real API server, and one carrying another identity
// (a node's certificate) says so.
func Whoami(ctx context.Context, server string, caPEM, certPEM, keyPEM []byte) (user string, groups []string, err error) {
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "", nil, fmt.Errorf("server %q is not an https URL", server)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrNotThisCluster, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return "", nil, fmt.Errorf("%w: the CA does not parse", ErrNotThisCluster)
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment, // as kubectl would go
		TLSClientConfig:     &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	body := `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, server+"/apis/authentication.k8s.io/v1/selfsubjectreviews", bytes.NewBufferString(body))
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		var cve *tls.CertificateVerificationError
		if errors.As(err, &cve) {
			return "", nil, fmt.Errorf("%w: the API server at %s does not present a certificate of the answer's CA (%v)", ErrNotThisCluster, u.Host, cve.Err)
		}
		return "", nil, fmt.Errorf("%w at %s: %v", ErrUnreachable, u.Host, unwrapURL(err))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("%w: the API server at %s answered %s to it: %s", ErrNotThisCluster, u.Host, resp.Status, oneLine(string(b), 200))
	}
	var ssr struct {
		Status struct {
			UserInfo struct {
				Username string   `json:"username"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal(b, &ssr); err != nil {
		return "", nil, fmt.Errorf("the API server at %s sent an unreadable SelfSubjectReview: %v", u.Host, err)
	}
	return ssr.Status.UserInfo.Username, ssr.Status.UserInfo.Groups, nil
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func oneLine(s string, n int) string {
	s = string(bytes.Join(bytes.Fields([]byte(s)), []byte(" ")))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
