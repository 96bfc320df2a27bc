package agent

import (
	"context"
	"log/slog"
	"net"

	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
)

// Data is what phases see: the resolved inputs, the facts earlier phases
// learned, the persisted state and the side-effect seams. It deliberately
// leaves out the runner, the reporter and the CLI options a phase has no
// business with.
type Data interface {
	Config() *Config
	Node() *Node
	// Master is the join data wait-master found (workers only).
	Master() *Master
	State() *state.State
	// SaveState persists the state now, e.g. before a command whose
	// interruption a rerun must notice.
	SaveState() error
	Settings() *Tunables

	OneGate() OneGate
	Kubeadm() Kubeadm
	Exec() system.Exec
	Root() system.Root
	Hostname() system.Hostname
	Clock() system.Clock
	// MasterClock reads a master's clock, on which a joining VM judges
	// the expiries a master stamped.
	MasterClock() MasterClock
	Log() *slog.Logger
	// Listen opens a listener on this VM's address (a joining master's
	// presentation, certgrant).
	Listen(network, addr string) (net.Listener, error)
	// SelfID is the VM ID of this VM's credentials (VMID in the context),
	// which OneGate's answers must agree with.
	SelfID() int
	// NewCluster is Options.NewCluster.
	NewCluster() bool
	// FreshDisk reports that this run found no state file: the agent
	// never ran on this disk (a first boot, or a recreated VM).
	FreshDisk() bool
	// ReportWaiting announces the running phase, if it is Lazy, the first
	// time it is called in that phase.
	ReportWaiting(ctx context.Context)
}

// bootData is the one implementation of Data.
type bootData struct {
	cfg    Config
	node   Node
	master Master
	st     *state.State
	tun    Tunables

	og    OneGate
	kadm  Kubeadm
	save  func() error
	exec  system.Exec
	root  system.Root
	host  system.Hostname
	clock system.Clock
	mclk  MasterClock
	log   *slog.Logger
	lsn   func(network, addr string) (net.Listener, error)

	self       int
	newCluster bool
	freshDisk  bool
	// waiting announces the running Lazy phase; nil once done (Runner).
	waiting func(context.Context)
}

var _ Data = (*bootData)(nil)

func (d *bootData) Config() *Config     { return &d.cfg }
func (d *bootData) Node() *Node         { return &d.node }
func (d *bootData) Master() *Master     { return &d.master }
func (d *bootData) State() *state.State { return d.st }
func (d *bootData) Settings() *Tunables { return &d.tun }
func (d *bootData) OneGate() OneGate    { return d.og }
func (d *bootData) Kubeadm() Kubeadm    { return d.kadm }
func (d *bootData) SaveState() error    { return d.save() }
func (d *bootData) Exec() system.Exec   { return d.exec }
func (d *bootData) Root() system.Root   { return d.root }
func (d *bootData) Clock() system.Clock { return d.clock }
func (d *bootData) Log() *slog.Logger   { return d.log }

func (d *bootData) Listen(network, addr string) (net.Listener, error) { return d.lsn(network, addr) }

func (d *bootData) MasterClock() MasterClock { return d.mclk }
func (d *bootData) SelfID() int              { return d.self }
func (d *bootData) NewCluster() bool         { return d.newCluster }
func (d *bootData) FreshDisk() bool          { return d.freshDisk }

func (d *bootData) Hostname() system.Hostname { return d.host }

func (d *bootData) armWaiting(announce func(context.Context)) { d.waiting = announce }

func (d *bootData) ReportWaiting(ctx context.Context) {
	if f := d.waiting; f != nil {
		d.waiting = nil
		f(ctx)
	}
}
