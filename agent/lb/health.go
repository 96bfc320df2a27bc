package lb

import (
	"context"
	"net"
	"sync"
	"time"
)

// DefaultHealthEvery is how often each backend is probed.
const DefaultHealthEvery = 2 * time.Second

// CheckHealth probes every backend once with a TCP connect, concurrently,
// and marks each. A bare connect is what kube-apiserver logs only at V(5)
// ("http: TLS handshake error", k8s.io/apiserver pkg/server
// secure_serving.go tlsHandshakeErrorWriter), so probing every 2 s from
// every node floods no log.
func (b *Balancer) CheckHealth(ctx context.Context) {
	timeout := b.DialTimeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	var wg sync.WaitGroup
	for addr := range b.Backends() {
		wg.Go(func() {
			dctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			var d net.Dialer
			c, err := d.DialContext(dctx, "tcp", addr)
			if err == nil {
				_ = c.Close()
			}
			if ctx.Err() == nil {
				b.setHealth(addr, err == nil)
			}
		})
	}
	wg.Wait()
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
