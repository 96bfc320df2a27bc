package agent

import (
	"fmt"
	"time"

	"github.com/onekube/onekube/agent/system"
)

// Options are the command-line choices of `onekube-agent bootstrap`.
type Options struct {
	// Root is joined to every path the agent reads or writes ("/" in a VM).
	Root system.Root
	// ContextFile is a context.sh to read; empty means credential discovery
	// (environment, one_env, the context CD).
	ContextFile string
	// OneGateCAFile is a PEM bundle trusted for an https ONEGATE_ENDPOINT,
	// besides the system's and ONEKUBE_ONEGATE_CA.
	OneGateCAFile string
	// NewCluster is the operator's word that the cluster this VM published
	// earlier is gone (the VM was recreated with a fresh disk): the master
	// clears the old join data and initializes a new cluster. It never
	// resets a node with kubeadm files on it.
	NewCluster bool
	Tunables
}

// Tunables bound the agent's waits and name its inputs on disk.
type Tunables struct {
	// MasterTimeout bounds a worker's wait for a master to publish.
	MasterTimeout time.Duration
	// OneGateTimeout bounds riding through OneGate failures outside that
	// wait: discovery and the final publish.
	OneGateTimeout time.Duration
	// PollInterval is the first backoff interval; MaxPollInterval caps it.
	PollInterval    time.Duration
	MaxPollInterval time.Duration
	// CommandTimeout bounds one kubeadm or kubectl run.
	CommandTimeout time.Duration
	// CNIDir holds <name>.yaml manifests the image carries.
	CNIDir string
	// InitEstimate is how long a first master expects kubeadm init to
	// take; it publishes the resulting ETA for waiting workers (pace.go).
	InitEstimate time.Duration
	// ClosePoll is a waiting worker's poll period around that ETA.
	ClosePoll time.Duration
	// StartSpread is the window over which workers spread their first
	// OneGate request (startspread.go).
	StartSpread time.Duration
}

// Defaults for Tunables.
const (
	DefaultMasterTimeout   = 30 * time.Minute
	DefaultOneGateTimeout  = 10 * time.Minute
	DefaultPollInterval    = 2 * time.Second
	DefaultMaxPollInterval = 30 * time.Second
	DefaultCommandTimeout  = 20 * time.Minute
	DefaultCNIDir          = "/usr/share/onekube/cni"
	// A master of the appliance image (images preloaded, kubelet
	// installed) finishes kubeadm init in about a minute; an estimate on
	// the short side costs close polls, one on the long side costs at
	// most half the time it overestimated (pace.go).
	DefaultInitEstimate = 60 * time.Second
	// ClosePoll for N waiting workers is N/2 OneGate requests a second.
	DefaultClosePoll = 2 * time.Second
	// Four requests each at start-up (GET /vm, GET /service, a poll, the
	// wait-master update) over 10 s are 0.4 N a second, under N/2 with
	// room for the master's own; a worker that knows its master (straight)
	// makes two and uses half the window (startspread.go).
	DefaultStartSpread = 10 * time.Second
)

// DefaultTunables returns the production settings.
func DefaultTunables() Tunables {
	return Tunables{
		MasterTimeout:   DefaultMasterTimeout,
		OneGateTimeout:  DefaultOneGateTimeout,
		PollInterval:    DefaultPollInterval,
		MaxPollInterval: DefaultMaxPollInterval,
		CommandTimeout:  DefaultCommandTimeout,
		CNIDir:          DefaultCNIDir,
		InitEstimate:    DefaultInitEstimate,
		ClosePoll:       DefaultClosePoll,
		StartSpread:     DefaultStartSpread,
	}
}

// withDefaults fills zero fields, so a caller may set only what it changes.
func (t Tunables) withDefaults() Tunables {
	d := DefaultTunables()
	if t.MasterTimeout == 0 {
		t.MasterTimeout = d.MasterTimeout
	}
	if t.OneGateTimeout == 0 {
		t.OneGateTimeout = d.OneGateTimeout
	}
	if t.PollInterval == 0 {
		t.PollInterval = d.PollInterval
	}
	if t.MaxPollInterval == 0 {
		t.MaxPollInterval = d.MaxPollInterval
	}
	if t.CommandTimeout == 0 {
		t.CommandTimeout = d.CommandTimeout
	}
	if t.CNIDir == "" {
		t.CNIDir = d.CNIDir
	}
	if t.InitEstimate == 0 {
		t.InitEstimate = d.InitEstimate
	}
	if t.ClosePoll == 0 {
		t.ClosePoll = d.ClosePoll
	}
	if t.StartSpread == 0 {
		t.StartSpread = d.StartSpread
	}
	return t
}

// Validate rejects settings no wait can honour.
func (t Tunables) Validate() error {
	for _, c := range []struct {
		name string
		d    time.Duration
	}{
		{"master timeout", t.MasterTimeout},
		{"OneGate timeout", t.OneGateTimeout},
		{"poll interval", t.PollInterval},
		{"max poll interval", t.MaxPollInterval},
		{"command timeout", t.CommandTimeout},
		{"init estimate", t.InitEstimate},
		{"close poll", t.ClosePoll},
		{"start spread", t.StartSpread},
	} {
		if c.d < 0 {
			return fmt.Errorf("%s must not be negative, got %s", c.name, c.d)
		}
	}
	if t.MaxPollInterval != 0 && t.PollInterval > t.MaxPollInterval {
		return fmt.Errorf("poll interval %s exceeds max poll interval %s", t.PollInterval, t.MaxPollInterval)
	}
	return nil
}
