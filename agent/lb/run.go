package lb

import (
	"context"
	"errors"
	"fmt"
	"github.com/onekube/onekube/agent/lb/lbconfig"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"slices"
	"time"
)

// Options configure Run.
type Options struct {
	// Listen is the balancer's address (the controlPlaneEndpoint).
	Listen string
	// ConfigFile is lb.json (seeded by bootstrap, kept current by Run).
	ConfigFile string
	// Kubeconfig is the credential the Follower reads endpoints with.
	Kubeconfig string
	// CAFile is the cluster CA the readiness probe pins (Balancer.CAFile).
	CAFile string
	// HealthEvery, FollowEvery and ReloadEvery pace the loops (defaults
	// 2 s, 10 s, 1 s).
	HealthEvery, FollowEvery, ReloadEvery time.Duration
	Log                                   *slog.Logger
	// Ready, when set, is called once the listener is open.
	Ready func()
}

// Run listens and balances until ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.FollowEvery <= 0 {
		o.FollowEvery = 10 * time.Second
	}
	if o.ReloadEvery <= 0 {
		o.ReloadEvery = time.Second
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.Listen, err)
	}
	b := &Balancer{Log: o.Log, CAFile: o.CAFile}
	w := &fileWatch{path: o.ConfigFile, b: b, log: o.Log}
	w.reload()
	f := &Follower{Balancer: b, Kubeconfig: o.Kubeconfig, Endpoint: o.Listen}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go b.HealthLoop(ctx, o.HealthEvery)
	go every(ctx, o.ReloadEvery, w.reload)
	go every(ctx, o.FollowEvery, func() { follow(ctx, f, w, o.Log) })
	o.Log.Info("balancing the API servers", "listen", o.Listen, "backends", len(b.Backends()))
	if o.Ready != nil {
		o.Ready()
	}
	return b.Serve(ctx, ln)
}

// follow takes the API servers' list as the backends and keeps it in the
// file, so a restart (a reboot) starts from it.
func follow(ctx context.Context, f *Follower, w *fileWatch, log *slog.Logger) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got, err := f.Once(rctx)
	switch {
	case errors.Is(err, ErrNoCredential):
		return
	case err != nil:
		if ctx.Err() == nil {
			log.Warn("following the API servers failed; keeping the backends", "error", err)
		}
		return
	}
	// Written when the set changed, and once when the file still holds
	// the seed: it then says the list is the cluster's own.
	if !f.Balancer.SetBackends(got) && w.source == lbconfig.SourceEndpoints {
		return
	}
	if err := w.write(lbconfig.Config{Backends: got, Source: lbconfig.SourceEndpoints}); err != nil {
		log.Warn("saving the backends failed", "file", w.path, "error", err)
	}
}

func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		f()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// fileWatch reloads lb.json when it changes (bootstrap seeding it while
// the balancer already runs).
type fileWatch struct {
	path   string
	b      *Balancer
	log    *slog.Logger
	seen   time.Time
	size   int64
	last   []string
	source string
}

func (w *fileWatch) reload() {
	fi, err := os.Stat(w.path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.log.Warn("reading the backends file failed", "file", w.path, "error", err)
		}
		return
	}
	if fi.ModTime().Equal(w.seen) && fi.Size() == w.size {
		return
	}
	w.seen, w.size = fi.ModTime(), fi.Size()
	c, err := lbconfig.ReadConfig(w.path)
	if err != nil {
		w.log.Warn("ignoring the backends file", "error", err)
		return
	}
	w.source = c.Source
	if len(c.Backends) == 0 || slices.Equal(c.Backends, w.last) {
		return
	}
	w.last = c.Backends
	w.b.SetBackends(c.Backends)
}

func (w *fileWatch) write(c lbconfig.Config) error {
	if err := lbconfig.WriteConfig(w.path, c); err != nil {
		return err
	}
	w.last, w.source = lbconfig.Normalize(c.Backends), c.Source
	return nil
}
