package lb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// DefaultHealthEvery is how often each backend is probed.
const DefaultHealthEvery = 2 * time.Second

// DefaultProbeTimeout bounds one probe. It is above the API server's own
// wait for etcd in /readyz (2 s, k8s.io/apiserver storagebackend
// DefaultReadinessTimeout), so an etcd that does not answer shows as the
// 500 readyz then gives, not as a probe cut short.
const DefaultProbeTimeout = 5 * time.Second

// unreadyAfter is how many failed readyz probes in a row mark a backend
// down, and so close its connections: one slow or failed answer (an etcd
// leader election, a loaded host) must not cut every kubelet's watches. A
// refused connection is final at once, as is a failed dial for a client.
const unreadyAfter = 2

// CheckHealth probes every backend once, concurrently, and marks each
// (probe.go says how).
func (b *Balancer) CheckHealth(ctx context.Context) {
	timeout := b.ProbeTimeout
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	p := b.prober()
	var wg sync.WaitGroup
	for addr := range b.Backends() {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			err := p.probe(pctx, addr)
			if ctx.Err() == nil {
				b.report(addr, err)
			}
		})
	}
	wg.Wait()
}

// report counts a probe's outcome and marks the backend.
func (b *Balancer) report(addr string, err error) {
	b.mu.Lock()
	be := b.backends[addr]
	if be == nil {
		b.mu.Unlock()
		return
	}
	if err == nil {
		be.fails = 0
	} else {
		be.fails++
	}
	fails := be.fails
	b.mu.Unlock()
	var nr *notReadyError
	switch {
	case err == nil:
		b.setHealth(addr, true, "")
	case errors.As(err, &nr) && fails < unreadyAfter:
		b.log().Debug("backend not ready once", "backend", addr, "error", err)
	default:
		b.setHealth(addr, false, err.Error())
	}
}

// notReadyError is a backend that answers TCP but is not ready.
type notReadyError struct{ err error }

func (e *notReadyError) Error() string { return e.err.Error() }
func (e *notReadyError) Unwrap() error { return e.err }

func notReady(format string, a ...any) error {
	return &notReadyError{fmt.Errorf(format, a...)}
}

// tcpProbe is the probe before the cluster CA exists: a connect. A bare
// connect is what kube-apiserver logs only at V(5) ("http: TLS handshake
// error", k8s.io/apiserver pkg/server secure_serving.go
// tlsHandshakeErrorWriter), so probing every 2 s from every node floods
// no log.
func tcpProbe(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// HealthLoop probes every interval until ctx ends.
func (b *Balancer) HealthLoop(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultHealthEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		b.CheckHealth(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
