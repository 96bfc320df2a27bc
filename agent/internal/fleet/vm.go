package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/context/onegatesim"
	"github.com/onekube/onekube/flow"
)

// vmRun is one VM of the fleet; its times are virtual. Fields after info
// and actor are guarded by fleet.mu.
type vmRun struct {
	info      onegatesim.VMInfo
	actor     *Actor
	created   time.Time
	joinStart time.Time
	finished  time.Time
	err       error
}

// vmCreated runs on the simulator's notifier for every VM: it registers
// the VM's actor at once (time cannot pass between OneFlow creating the VM
// and the VM counting), then boots it in a goroutine of its own.
func (f *fleet) vmCreated(info onegatesim.VMInfo) {
	v := &vmRun{info: info, created: f.clock.Now(),
		actor: f.clock.Actor(fmt.Sprintf("vm %d %s", info.ID, info.Role))}
	f.note(v, v.created, "created by OneFlow")
	f.mu.Lock()
	f.vms[info.ID] = v
	f.created++
	first := 1 + f.cfg.Workers
	if f.cfg.Deployment == Straight {
		first = 1
	}
	var release []func()
	if f.created == first {
		release = append(release, f.releaseFirst)
	}
	if f.created == 1+f.cfg.Workers && f.releaseWorkers != nil {
		release = append(release, f.releaseWorkers)
	}
	f.mu.Unlock()
	go f.runVM(v)
	for _, r := range release {
		r()
	}
}

// runVM boots the VM (B; in straight mode a worker first waits G after the
// master's READY=YES), then runs its agent.
func (f *fleet) runVM(v *vmRun) {
	defer f.wg.Done()
	defer v.actor.Leave()
	boot := f.cfg.Model.Boot
	if f.cfg.Deployment == Straight && v.info.Role != flow.RoleMaster {
		f.mu.Lock()
		boot = f.published.Add(f.g + f.cfg.Model.Boot).Sub(v.created)
		f.mu.Unlock()
	}
	err := v.actor.Sleep(context.Background(), boot)
	if err == nil {
		f.note(v, f.clock.Now(), "booted: onekube-agent starts")
		err = f.bootstrap(v)
	}
	now := f.clock.Now()
	f.mu.Lock()
	v.finished, v.err = now, err
	f.mu.Unlock()
	if err != nil {
		f.note(v, now, "onekube-agent FAILED: "+err.Error())
	} else {
		f.note(v, now, "onekube-agent done")
	}
}

// bootstrap runs agent.Bootstrap as the VM would, with kubeadm played by a
// fake whose init and join take I and J of virtual time.
func (f *fleet) bootstrap(v *vmRun) error {
	r := system.Root(filepath.Join(f.dir, fmt.Sprint(v.info.ID)))
	m := f.cfg.Model
	exec := (&systemtest.FakeExec{}).
		On("kubeadm version", systemtest.Reply{Stdout: "v1.37.2\n"}).
		On("kubeadm init", systemtest.Reply{Do: func(system.Cmd) error {
			f.note(v, f.clock.Now(), "kubeadm init starts")
			if err := v.actor.Sleep(context.Background(), m.Init); err != nil {
				return err
			}
			f.note(v, f.clock.Now(), "kubeadm init done")
			return r.WriteFile(agent.CACertFile, f.ca, 0o644)
		}}).
		On("kubeadm join", systemtest.Reply{Do: func(system.Cmd) error {
			now := f.clock.Now()
			f.mu.Lock()
			v.joinStart = now
			f.mu.Unlock()
			f.note(v, now, "kubeadm join starts")
			if err := v.actor.Sleep(context.Background(), m.Join); err != nil {
				return err
			}
			f.note(v, f.clock.Now(), "kubeadm join done")
			return nil
		}}).
		On("kubectl", systemtest.Reply{})
	if err := r.WriteFile(filepath.Join(agent.DefaultCNIDir, "flannel.yaml"), []byte(simcluster.FlannelManifest), 0o644); err != nil {
		return err
	}
	if err := r.WriteFile(system.KernelHostnameFile, []byte(simcluster.ImageHostname+"\n"), 0o644); err != nil {
		return err
	}
	return agent.Bootstrap(context.Background(), agent.Options{Root: r, Tunables: f.cfg.Tunables}, agent.Deps{
		LoadSource: agent.ContextSource(r, v.info.ContextFile, func(string) string { return "" }),
		NewOneGate: func(c agent.OneGateConfig) (agent.OneGate, error) {
			c.HTTPClient = &http.Client{Transport: meter{f: f, vm: v, base: f.base}}
			return agent.NewOneGateClient(c)
		},
		Kubeadm: kubeadm.Runner{Exec: exec},
		Exec:    exec,
		Clock:   v.actor,
		Log:     slog.New(slog.DiscardHandler),
	})
}
