package onegatesim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"
)

// Sim is a running OneGate + OneFlow simulation. All methods are safe for
// concurrent use.
type Sim struct {
	o      Options
	v      version
	verErr error
	ownDir bool
	deny   map[string]bool

	mu        sync.Mutex
	closed    bool
	changed   chan struct{}
	nextVMID  int
	nextSvcID int
	services  map[int]*service
	vms       map[int]*vm
	usedIPs   map[netip.Addr]bool
	endpoint  string
	events    []Event
	stats     map[int]*Stats
	faults    []*faultEntry
	faultSeq  int
	timers    []*time.Timer
	hooks     []func(VMInfo)
	// shutdownHooks run for each soft terminate (shutdown.go); hookWG
	// counts those running, which Close waits for.
	shutdownHooks []func(VMInfo)
	powerHooks    []func(VMInfo, Power) // vmaction.go
	hookWG        sync.WaitGroup
	owner         ownerState // owner.go
	notifyQ       []VMInfo
	notifyCond    *sync.Cond

	notifierDone chan struct{}
	images       []Image             // disk hot-plug (disks.go)
	diskHooks    []func(int, []Disk) // disk hot-plug (disks.go)
	srv          *http.Server
	handler      http.Handler
}

// New builds a simulator. A bad Options.Version is reported by Start and
// Instantiate; the zero Options are valid.
func New(o Options) *Sim {
	o.withDefaults()
	s := &Sim{
		o:            o,
		changed:      make(chan struct{}),
		nextVMID:     o.VMIDBase,
		nextSvcID:    o.ServiceIDBase,
		services:     map[int]*service{},
		vms:          map[int]*vm{},
		usedIPs:      map[netip.Addr]bool{},
		endpoint:     strings.TrimSuffix(o.Endpoint, "/"),
		stats:        map[int]*Stats{},
		deny:         map[string]bool{},
		notifierDone: make(chan struct{}),
	}
	s.v, s.verErr = parseVersion(o.Version)
	for _, d := range o.Deny {
		s.deny[d] = true
	}
	s.notifyCond = sync.NewCond(&s.mu)
	s.handler = http.HandlerFunc(s.serveHTTP)
	go s.notifier()
	return s
}

// Handler returns the OneGate HTTP handler, for in-process use with
// httptest; set Options.Endpoint so contexts carry the right URL.
func (s *Sim) Handler() http.Handler { return s.handler }

// Start listens on Options.Listen (127.0.0.1:0 by default), serves OneGate
// there and returns its base URL, which becomes ONEGATE_ENDPOINT.
func (s *Sim) Start() (string, error) {
	if s.verErr != nil {
		return "", s.verErr
	}
	ln, err := net.Listen("tcp", s.o.Listen)
	if err != nil {
		return "", fmt.Errorf("listening for onegate: %w", err)
	}
	url := "http://" + ln.Addr().String()
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return "", ErrClosed
	}
	if s.srv != nil {
		s.mu.Unlock()
		ln.Close()
		return "", errors.New("onegate simulator already started")
	}
	s.srv = srv
	if s.endpoint == "" {
		s.endpoint = url
	}
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	s.o.Logf("onegatesim: OneGate %s listening at %s", s.v, url)
	return url, nil
}

// Endpoint returns the ONEGATE_ENDPOINT written into contexts ("" before
// Start unless Options.Endpoint is set).
func (s *Sim) Endpoint() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpoint
}

// Close stops the server and the timers, wakes every waiter and, if the
// context directories were the simulator's own temporary ones, removes them.
func (s *Sim) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, t := range s.timers {
		t.Stop()
	}
	srv := s.srv
	s.broadcast()
	s.notifyCond.Broadcast()
	s.mu.Unlock()
	<-s.notifierDone
	s.hookWG.Wait()
	var err error
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if e := srv.Shutdown(ctx); e != nil {
			err = errors.Join(err, fmt.Errorf("stopping onegate server: %w", e))
			_ = srv.Close()
		}
	}
	if s.ownDir {
		if e := os.RemoveAll(s.o.Dir); e != nil {
			err = errors.Join(err, fmt.Errorf("removing context dirs: %w", e))
		}
	}
	return err
}

// dir returns the directory holding VM context dirs, creating a temporary
// one on first use when Options.Dir is empty. Callers hold s.mu.
func (s *Sim) dir() (string, error) {
	if s.o.Dir == "" {
		d, err := os.MkdirTemp("", "onegatesim-")
		if err != nil {
			return "", fmt.Errorf("creating context root: %w", err)
		}
		s.o.Dir, s.ownDir = d, true
	}
	return s.o.Dir, nil
}
