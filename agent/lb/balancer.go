package lb

import (
	"context"
	"errors"
	"fmt"
	"github.com/onekube/onekube/agent/lb/lbconfig"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"
)

// Defaults of a Balancer.
const (
	DefaultDialTimeout = 2 * time.Second
)

// Balancer forwards each accepted connection to one healthy backend, round
// robin, trying the next when a dial fails. Healthy means ready: /readyz
// answers 200 (probe.go). It closes the connections of a backend that
// turned unhealthy or was removed, so clients (kubelets' watches)
// reconnect through a ready one at once instead of waiting out TCP
// timeouts against a dead host, or watching an API server whose etcd is
// gone, which serves from its cache and never moves on.
type Balancer struct {
	Log         *slog.Logger
	DialTimeout time.Duration
	// CAFile is the cluster CA (/etc/kubernetes/pki/ca.crt), pinned by
	// the readiness probe; until it exists the probe is a TCP connect.
	CAFile string
	// ProbeTimeout bounds one probe (DefaultProbeTimeout when zero).
	ProbeTimeout time.Duration

	mu       sync.Mutex
	backends map[string]*backend
	next     int
	dialer   net.Dialer
	probes   *prober
}

type backend struct {
	addr    string
	healthy bool
	fails   int // failed probes in a row
	conns   map[net.Conn]struct{}
}

func (b *Balancer) log() *slog.Logger {
	if b.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Log
}

// SetBackends replaces the backend set. New backends start healthy (a dial
// failure or the next health check says otherwise); removed ones have
// their connections closed. It reports whether the set changed.
func (b *Balancer) SetBackends(addrs []string) bool {
	addrs = lbconfig.Normalize(addrs)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.backends == nil {
		b.backends = map[string]*backend{}
	}
	changed := false
	for _, a := range addrs {
		if _, ok := b.backends[a]; !ok {
			b.backends[a] = &backend{addr: a, healthy: true, conns: map[net.Conn]struct{}{}}
			changed = true
		}
	}
	for a, be := range b.backends {
		if !slices.Contains(addrs, a) {
			closeAll(be)
			delete(b.backends, a)
			changed = true
		}
	}
	if changed {
		b.log().Info("backends", "now", addrs)
	}
	return changed
}

// Backends lists the backends and their health.
func (b *Balancer) Backends() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]bool, len(b.backends))
	for a, be := range b.backends {
		out[a] = be.healthy
	}
	return out
}

// order is the backends to try for one connection: the healthy ones from
// the round-robin position, then the unhealthy ones (a health mark may be
// stale; trying costs one dial timeout). An unready backend thus gets a
// new connection only when no ready one accepts it: a lone master that
// lost etcd still serves what its cache holds, which beats refusing.
func (b *Balancer) order() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var up, down []string
	for a, be := range b.backends {
		if be.healthy {
			up = append(up, a)
		} else {
			down = append(down, a)
		}
	}
	slices.Sort(up)
	slices.Sort(down)
	if len(up) > 0 {
		k := b.next % len(up)
		b.next++
		up = append(up[k:], up[:k]...)
	}
	return append(up, down...)
}

// setHealth marks a backend; a backend turning unhealthy loses its
// connections.
func (b *Balancer) setHealth(addr string, ok bool, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	be := b.backends[addr]
	if be == nil || be.healthy == ok {
		return
	}
	be.healthy = ok
	if ok {
		b.log().Info("backend up", "backend", addr)
		return
	}
	b.log().Warn("backend down; closing its connections", "backend", addr, "connections", len(be.conns), "why", why)
	closeAll(be)
}

func closeAll(be *backend) {
	for c := range be.conns {
		_ = c.Close()
	}
	clear(be.conns)
}

// ErrNoBackend means no backend accepted a connection.
var ErrNoBackend = errors.New("no API server backend reachable")

// DialContext connects to a backend, whatever addr says: it is the
// balancer's own dialer, which the Follower's API client uses so that
// reading the endpoints needs no live master in particular.
func (b *Balancer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	c, _, err := b.dial(ctx)
	return c, err
}

func (b *Balancer) dial(ctx context.Context) (net.Conn, string, error) {
	timeout := b.DialTimeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	var errs []error
	for _, a := range b.order() {
		dctx, cancel := context.WithTimeout(ctx, timeout)
		c, err := b.dialer.DialContext(dctx, "tcp", a)
		cancel()
		if err == nil {
			return c, a, nil
		}
		b.setHealth(a, false, err.Error())
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, "", fmt.Errorf("%w: no backends known yet", ErrNoBackend)
	}
	return nil, "", fmt.Errorf("%w: %w", ErrNoBackend, errors.Join(errs...))
}

// Serve accepts on ln until ctx ends, forwarding every connection.
func (b *Balancer) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		_ = ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		wg.Go(func() { b.forward(ctx, c) })
	}
}

// forward pipes one client connection to a backend until either side
// closes, or the backend is dropped.
func (b *Balancer) forward(ctx context.Context, client net.Conn) {
	defer client.Close()
	up, addr, err := b.dial(ctx)
	if err != nil {
		b.log().Debug("refusing a connection", "error", err)
		return
	}
	if !b.track(addr, up) {
		_ = up.Close()
		return
	}
	defer b.untrack(addr, up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Half-close so the other direction can finish (TLS close_notify).
		if tc, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, client)
	go pipe(client, up)
	select {
	case <-done:
		// One side finished; give the other a moment, then cut both.
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	_ = up.Close()
	_ = client.Close()
}

func (b *Balancer) track(addr string, c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	be := b.backends[addr]
	if be == nil {
		return false // removed while dialling
	}
	be.conns[c] = struct{}{}
	return true
}

func (b *Balancer) untrack(addr string, c net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if be := b.backends[addr]; be != nil {
		delete(be.conns, c)
	}
}
