package certgrant

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// FetchTimeout bounds one read of a presentation: a joiner that waits
// answers within milliseconds.
const FetchTimeout = 3 * time.Second

// Serve answers GET PresentPath on ln with p until ctx ends, over TLS
// with a certificate made for this listener. The certificate authenticates
// nothing (the acting master has nothing to pin it to): what vouches for
// the answer is the address it came from. TLS only keeps the listener
// from being a plain-text HTTP server on the node.
func Serve(ctx context.Context, ln net.Listener, p Presentation) error {
	cert, err := selfSigned()
	if err != nil {
		return err
	}
	body := p.Marshal()
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PresentPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(body)
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       5 * time.Second,
		WriteTimeout:      5 * time.Second,
		MaxHeaderBytes:    8 << 10,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}},
		// A scanner's failed handshakes are no news for the journal.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		_ = srv.Close()
	}()
	err = srv.ServeTLS(ln, "", "")
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// selfSigned makes a throwaway ECDSA certificate for one listener.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "onekube control-plane presentation"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("making the presentation certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// Dialer connects to an address (a net.Dialer's DialContext).
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// Fetch reads the presentation at addr:PresentPort and checks it names
// vmid. dial nil is a net.Dialer.
func Fetch(ctx context.Context, dial Dialer, addr netip.Addr, vmid int) (Presentation, error) {
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	hc := &http.Client{
		Transport: &http.Transport{
			Proxy:       nil, // the joiner's own address, never a proxy's
			DialContext: dial,
			// Nothing to verify against: see Serve.
			TLSClientConfig:   &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true}, //nolint:gosec // the address vouches, not the certificate
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	at := net.JoinHostPort(addr.String(), strconv.Itoa(PresentPort))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+at+PresentPath, nil)
	if err != nil {
		return Presentation{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Presentation{}, fmt.Errorf("reading VM %d's presentation at %s: %w", vmid, at, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return Presentation{}, fmt.Errorf("reading VM %d's presentation at %s: answered %d", vmid, at, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxPresentation+1))
	if err != nil {
		return Presentation{}, fmt.Errorf("reading VM %d's presentation at %s: %w", vmid, at, err)
	}
	p, err := CheckPresentation(b, vmid)
	if err != nil {
		return Presentation{}, fmt.Errorf("%s: %w", at, err)
	}
	return p, nil
}
