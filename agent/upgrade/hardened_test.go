package upgrade

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/OpenNebula/one/src/oca/go/src/goca"

	"github.com/onekube/onekube/agent/gate"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// simDisks is the hypervisor side of the simulator's disks: the bundle's
// label shows in the guest while a disk of the image is attached.
type simDisks struct {
	sim   *onegatesim.Sim
	vmid  int
	image int
	fs    *fakeVM // mounting copies the bundle in
}

func (d simDisks) Find(context.Context, string) (string, bool, error) {
	for _, disk := range d.sim.Disks(d.vmid) {
		if disk.ImageID == d.image {
			return "/dev/" + disk.Target, true, nil
		}
	}
	return "", false, nil
}

func (d simDisks) Mount(ctx context.Context, dev, dir string) error { return d.fs.Mount(ctx, dev, dir) }
func (d simDisks) Unmount(ctx context.Context, dir string) error    { return d.fs.Unmount(ctx, dir) }

// Under a hardened onegate-server.conf (HardenedDeny: no action_by_id)
// a node cannot attach the bundle to itself. Its error names the owner's
// onevm disk-attach; once the owner attached it and ran the CLI again,
// the node upgrades, and the detach OneGate also refuses leaves the node
// done, saying the owner should detach.
func TestExecutorUnderHardenedOneGate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sim := onegatesim.New(onegatesim.Options{Dir: t.TempDir(), Version: "7.4", Deny: onegatesim.HardenedDeny()})
	endpoint, err := sim.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	sid, err := sim.Instantiate([]byte(`{"name":"k8s","deployment":"none","roles":[{"name":"master","type":"vm","template_id":1,"cardinality":1}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	vm := sim.RoleVMs(sid, "master")[0]
	creds := vmcontext.Credentials{Endpoint: endpoint, VMID: vm.ID, Token: vm.Token}
	actions, err := gate.NewActor(gate.Config{Creds: creds})
	if err != nil {
		t.Fatal(err)
	}
	og, err := gate.NewClient(gate.Config{Creds: creds})
	if err != nil {
		t.Fatal(err)
	}
	img := sim.CreateImage(onegatesim.Image{Name: "onekube-bundle-v1.37.2", Source: "/nonexistent"})

	r := newRig(t, "v1.37.2", ModeApply)
	r.cluster.data[KeyBundleImage] = strconv.Itoa(img)
	r.e.Disks = OneGateDisks{Actions: actions, VMID: vm.ID, DiskID: ServiceDisks{OneGate: og, VMID: vm.ID}.DiskID}
	r.e.Mounter = simDisks{sim: sim, vmid: vm.ID, image: img, fs: r.vm}
	var notices []string
	r.e.Notice = func(msg string) { notices = append(notices, msg) }
	var published []string
	r.e.Publish = publishFunc(func(step, errText string) { published = append(published, step+": "+errText) })

	// The node's own attachdisk: 403, and the error says what to do.
	err = r.e.RunOnce(ctx)
	if err == nil {
		t.Fatal("the attach under hardening succeeded")
	}
	for _, want := range []string{"upgrade step attach", "onevm disk-attach " + strconv.Itoa(vm.ID) + " --image " + strconv.Itoa(img),
		"then runs onekube-flow upgrade again", "403", ":action_by_id: false"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("attach error %q lacks %q", err, want)
		}
	}
	if len(sim.Disks(vm.ID)) != 0 || len(r.exec.Calls) != 0 {
		t.Fatalf("after a refused attach: disks %+v, commands %q", sim.Disks(vm.ID), r.commands())
	}

	t.Logf("attach error: %v", err)
	// The owner attaches the bundle with oned's credentials (onevm
	// disk-attach is one.vm.attach) and runs onekube-flow upgrade again.
	oned := httptest.NewServer(sim.OnedHandler("oneadmin", "pw"))
	defer oned.Close()
	ctrl := goca.NewController(goca.NewClient(goca.NewConfig("oneadmin", "pw", oned.URL), oned.Client()))
	if err := ctrl.VM(vm.ID).DiskAttach(fmt.Sprintf("DISK=[IMAGE_ID=%d]", img)); err != nil {
		t.Fatal(err)
	}
	r.cluster.data[KeyAttempt] = "2"
	if err := r.e.RunOnce(ctx); err != nil {
		t.Fatalf("RunOnce with the owner's disk: %v", err)
	}
	st, err := LoadNodeState(r.e.StateFile)
	if err != nil || st.Done != StepDone || st.Failed != "" {
		t.Fatalf("node state %+v, %v", st, err)
	}
	if got := r.binary(t, "kubeadm"); got != "new kubeadm" {
		t.Fatalf("kubeadm = %q", got)
	}
	if last := r.cluster.claims[len(r.cluster.claims)-1]; last != "v1.37.2 done" || r.cluster.errs[len(r.cluster.errs)-1] != "" {
		t.Fatalf("last claim %q (error %q)", last, r.cluster.errs[len(r.cluster.errs)-1])
	}
	// The detach was refused too: the disk stays, and the owner is told
	// how to detach it, in the log and beside the done step in OneGate.
	disks := sim.Disks(vm.ID)
	if len(disks) != 1 {
		t.Fatalf("disks after the upgrade: %+v", disks)
	}
	detach := fmt.Sprintf("onevm disk-detach %d %d", vm.ID, disks[0].DiskID)
	if len(notices) != 1 || !strings.Contains(notices[0], detach) || !strings.Contains(notices[0], "left attached") {
		t.Fatalf("notices %q, want one naming %q", notices, detach)
	}
	if last := published[len(published)-1]; !strings.HasPrefix(last, "v1.37.2 done: ") || !strings.Contains(last, detach) {
		t.Fatalf("published %q", published)
	}
	t.Logf("notice: %s", notices[0])
	if r.vm.mounted {
		t.Fatal("the bundle is still mounted")
	}
	if _, err := os.Stat(r.e.MountDir); err != nil {
		t.Fatal(err)
	}
}

type publishFunc func(step, errText string)

func (f publishFunc) Publish(_ context.Context, step, errText string) error {
	f(step, errText)
	return nil
}
