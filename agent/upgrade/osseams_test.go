package upgrade

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

func TestOSMounter(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		blkid systemtest.Reply
		dev   string
		found bool
		err   string
	}{
		"found":        {blkid: systemtest.Reply{Stdout: "/dev/vdc\n"}, dev: "/dev/vdc", found: true},
		"absent":       {blkid: systemtest.Reply{Code: 2}, found: false},
		"blkid broken": {blkid: systemtest.Reply{Code: 4, Stderr: "boom"}, err: "exit status 4"},
		"odd answer":   {blkid: systemtest.Reply{Stdout: "vdc -o x"}, err: "blkid -L ONEKUBE-BUNDLE said"},
	} {
		t.Run(name, func(t *testing.T) {
			m := OSMounter{Exec: (&systemtest.FakeExec{}).On("blkid", tc.blkid)}
			dev, found, err := m.Find(ctx, "ONEKUBE-BUNDLE")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Find = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || dev != tc.dev || found != tc.found {
				t.Fatalf("Find = %q, %v, %v", dev, found, err)
			}
		})
	}
	// Mount: read-only, nodev, nosuid, noexec; skipped when mounted.
	fx := (&systemtest.FakeExec{}).On("mountpoint", systemtest.Reply{Code: 1}).On("mount", systemtest.Reply{})
	if err := (OSMounter{Exec: fx}).Mount(ctx, "/dev/vdc", "/run/onekube/bundle"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fx.Calls[1].Args, " "); got != "-o ro,nodev,nosuid,noexec /dev/vdc /run/onekube/bundle" {
		t.Fatalf("mount %s", got)
	}
	fx = (&systemtest.FakeExec{}).On("mountpoint", systemtest.Reply{})
	if err := (OSMounter{Exec: fx}).Mount(ctx, "/dev/vdc", "/run/onekube/bundle"); err != nil || fx.Count("mount") != 0 {
		t.Fatalf("Mount when mounted: %v, %d mounts", err, fx.Count("mount"))
	}
	fx = (&systemtest.FakeExec{}).On("mountpoint", systemtest.Reply{Code: 1})
	if err := (OSMounter{Exec: fx}).Unmount(ctx, "/run/onekube/bundle"); err != nil || fx.Count("umount") != 0 {
		t.Fatalf("Unmount when not mounted: %v", err)
	}
}

type recordedAction struct {
	vmID    int
	perform string
	params  map[string]string
}

type fakeActions struct{ calls []recordedAction }

func (f *fakeActions) Action(_ context.Context, vmID int, perform string, params map[string]string) error {
	f.calls = append(f.calls, recordedAction{vmID, perform, params})
	return nil
}

func TestOneGateDisks(t *testing.T) {
	ctx := context.Background()
	a := &fakeActions{}
	d := OneGateDisks{Actions: a, VMID: 12}
	if err := d.Attach(ctx, 118); err != nil {
		t.Fatal(err)
	}
	if err := d.Detach(ctx, 118); err != nil { // no DiskID: left attached
		t.Fatal(err)
	}
	d.DiskID = func(context.Context, int) (int, error) { return 3, nil }
	if err := d.Detach(ctx, 118); err != nil {
		t.Fatal(err)
	}
	want := []recordedAction{
		{12, "attachdisk", map[string]string{"disk_template": "DISK=[IMAGE_ID=118]"}},
		{12, "detachdisk", map[string]string{"disk_id": "3"}},
	}
	if len(a.calls) != 2 || a.calls[0].perform != want[0].perform || a.calls[0].params["disk_template"] != want[0].params["disk_template"] ||
		a.calls[1].params["disk_id"] != "3" || a.calls[0].vmID != 12 || a.calls[1].vmID != 12 {
		t.Fatalf("actions %+v", a.calls)
	}
	// What the real client sends for them: the template String and the
	// Integer oned takes (onegate-server.rb perform_action).
	for i, body := range []string{`{"action":{"params":"DISK=[IMAGE_ID=118]","perform":"attachdisk"}}`, `{"action":{"params":3,"perform":"detachdisk"}}`} {
		if got, err := onegate.ActionBody(a.calls[i].perform, a.calls[i].params); err != nil || got != body {
			t.Errorf("ActionBody(%s, %v) = %s, %v; want %s", a.calls[i].perform, a.calls[i].params, got, err, body)
		}
	}
	d.DiskID = func(context.Context, int) (int, error) { return 0, errors.New("unknown") }
	if err := d.Detach(ctx, 118); err == nil {
		t.Fatal("Detach without a disk ID succeeded")
	}
	d.DiskID = func(context.Context, int) (int, error) { return 0, ErrNotAttached }
	if err := d.Detach(ctx, 118); err != nil || len(a.calls) != 2 {
		t.Fatalf("Detach of a disk already gone: %v, %d calls", err, len(a.calls))
	}
}

func TestKubePlan(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"}})
	k := KubePlan{Client: cs, Node: "w1"}
	if _, found, err := k.ReadPlan(ctx); err != nil || found {
		t.Fatalf("ReadPlan without a plan: %v %v", found, err)
	}
	cs.CoreV1().ConfigMaps(PlanNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: PlanName, Namespace: PlanNamespace}, Data: map[string]string{KeyTarget: "v1.37.2"}}, metav1.CreateOptions{})
	if data, found, err := k.ReadPlan(ctx); err != nil || !found || data[KeyTarget] != "v1.37.2" {
		t.Fatalf("ReadPlan: %v %v %v", data, found, err)
	}
	if err := k.Annotate(ctx, "v1.37.2 failed", "kubeadm-upgrade: exited 1"); err != nil {
		t.Fatal(err)
	}
	if err := k.Annotate(ctx, "v1.37.2 done", ""); err != nil {
		t.Fatal(err)
	}
	n, _ := cs.CoreV1().Nodes().Get(ctx, "w1", metav1.GetOptions{})
	if n.Annotations[AnnotationStep] != "v1.37.2 done" {
		t.Fatalf("annotations %v", n.Annotations)
	}
	if _, ok := n.Annotations[AnnotationError]; ok {
		t.Fatalf("the error annotation outlived its step: %v", n.Annotations)
	}
}

func FuzzParseStepClaim(f *testing.F) {
	for _, s := range []string{"v1.37.2 done", "v1.37.2 failed", "v1.37.2  done", "v1.37.2 done ", " v1.37.2 done", "x y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseStepClaim(s)
		if !ok {
			return
		}
		// A claim names a known step and round-trips exactly.
		if got := FormatStepClaim(c.Version, c.Step); got != s {
			t.Fatalf("ParseStepClaim(%q) formats back as %q", s, got)
		}
	})
}

func FuzzParsePlan(f *testing.F) {
	f.Add("v1.37.2", "7", strings.Repeat("a", 64), "1")
	f.Add("v1.37.2", "-1", "x", "")
	f.Add("", "007", strings.Repeat("A", 64), "99999999999999999999")
	f.Fuzz(func(t *testing.T, target, image, sum, attempt string) {
		p, err := ParsePlan(map[string]string{KeyTarget: target, KeyBundleImage: image, KeyBundleSHA256: sum, KeyAttempt: attempt})
		if err != nil {
			return
		}
		again, err := ParsePlan(p.Data())
		if err != nil || again != p {
			t.Fatalf("round trip: %+v, %v vs %+v", again, err, p)
		}
		if p.BundleImage < 0 || p.Attempt < 0 || len(p.BundleSHA) != 64 {
			t.Fatalf("accepted %+v", p)
		}
	})
}

// fakeGate is OneGate's extended service document, nothing else.
type fakeGate struct{ svc *onegate.Service }

func (f fakeGate) GetVM(context.Context) (*onegate.VM, error) { return nil, errors.New("unused") }
func (f fakeGate) GetVMByID(context.Context, int) (*onegate.VM, error) {
	return nil, errors.New("unused")
}
func (f fakeGate) GetService(context.Context) (*onegate.Service, error)         { return f.svc, nil }
func (f fakeGate) GetServiceExtended(context.Context) (*onegate.Service, error) { return f.svc, nil }
func (f fakeGate) UpdateVM(context.Context, ...onegate.KV) error                { return nil }
func (f fakeGate) EraseVMKey(context.Context, string) error                     { return nil }

func TestServiceDisks(t *testing.T) {
	svc := &onegate.Service{Roles: []onegate.Role{
		{Name: "master", Nodes: []onegate.Node{{VMID: 4, VM: &onegate.VM{ID: 4, Disks: []onegate.Disk{{ID: 3, ImageID: 118}}}}}},
		{Name: "worker", Nodes: []onegate.Node{{VMID: 12, VM: &onegate.VM{ID: 12, Disks: []onegate.Disk{
			{ID: 0, ImageID: 5, Target: "vda"}, {ID: 2, ImageID: 118, Target: "vdb"}, {ID: 4, ImageID: 118, Target: "vdc"},
		}}}}},
	}}
	for name, tc := range map[string]struct {
		vm, image, want int
		err             error
	}{
		"newest of the image":           {vm: 12, image: 118, want: 4},
		"not attached":                  {vm: 12, image: 119, err: ErrNotAttached},
		"another VM's disk is not ours": {vm: 13, image: 118, err: errors.New("does not list VM 13")},
	} {
		t.Run(name, func(t *testing.T) {
			id, err := ServiceDisks{OneGate: fakeGate{svc}, VMID: tc.vm}.DiskID(context.Background(), tc.image)
			switch {
			case tc.err == nil && (err != nil || id != tc.want):
				t.Fatalf("DiskID = %d, %v; want %d", id, err, tc.want)
			case tc.err != nil && (err == nil || !errors.Is(err, tc.err) && !strings.Contains(err.Error(), tc.err.Error())):
				t.Fatalf("DiskID = %d, %v; want %v", id, err, tc.err)
			}
		})
	}
}

// pubGate is this VM's USER_TEMPLATE behind OneGate, refusing what the
// real client refuses (onegate.CheckValue: empty values, quotes, commas).
type pubGate struct {
	gate.OneGate
	ut map[string]string
}

func (g *pubGate) GetVM(context.Context) (*onegate.VM, error) {
	return &onegate.VM{ID: 5, UserTemplate: maps.Clone(g.ut)}, nil
}

func (g *pubGate) UpdateVM(_ context.Context, kvs ...onegate.KV) error {
	for _, kv := range kvs {
		if err := onegate.CheckValue(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	for _, kv := range kvs {
		g.ut[kv.Key] = kv.Value
	}
	return nil
}

func (g *pubGate) EraseVMKey(_ context.Context, key string) error {
	delete(g.ut, key)
	return nil
}

// A step without an error is published (its error key erased, never set
// empty), and a failure's text, which quotes kubeadm's words, is stored.
func TestOneGatePublisher(t *testing.T) {
	ctx := context.Background()
	g := &pubGate{ut: map[string]string{}}
	p := OneGatePublisher{OneGate: g}
	if err := p.Publish(ctx, "v1.37.2 attach", ""); err != nil {
		t.Fatal(err)
	}
	if got := g.ut[vmcontext.KeyPubNodeUpgrade]; got != "v1.37.2 attach" {
		t.Fatalf("step %q", got)
	}
	if err := p.Publish(ctx, "v1.37.2 failed", `kubeadm-upgrade: exit 1: [preflight] "x", y`); err != nil {
		t.Fatal(err)
	}
	if got := g.ut[vmcontext.KeyPubNodeUpgradeError]; got == "" || strings.ContainsAny(got, `",[]\`) {
		t.Fatalf("error published as %q", got)
	}
	if err := p.Publish(ctx, "v1.37.2 attach", ""); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.ut[vmcontext.KeyPubNodeUpgradeError]; ok {
		t.Fatalf("error key kept after a step without error: %v", g.ut)
	}
}

type refusingActions struct{ err error }

func (f refusingActions) Action(context.Context, int, string, map[string]string) error { return f.err }

// A 403 from the unclassified client reads as the classified one does:
// attach names the owner's onevm disk-attach, detach leaves the disk to
// the owner; any other error stays what it was.
func TestOneGateDisksForbidden(t *testing.T) {
	ctx := context.Background()
	diskID := func(context.Context, int) (int, error) { return 4, nil }
	forbidden := &onegate.Error{Method: "POST", Path: "/vms/12/action", Status: 403, Body: "Action (action_by_id) on resource (vm) not supported"}
	d := OneGateDisks{Actions: refusingActions{forbidden}, VMID: 12, DiskID: diskID}
	if err := d.Attach(ctx, 118); !errors.Is(err, ErrSelfActionForbidden) || !strings.Contains(err.Error(), "onevm disk-attach 12 --image 118") {
		t.Errorf("Attach: %v", err)
	}
	if err := d.Detach(ctx, 118); !errors.Is(err, ErrLeftAttached) || !strings.Contains(err.Error(), "onevm disk-detach 12 4") {
		t.Errorf("Detach: %v", err)
	}
	other := &onegate.Error{Method: "POST", Path: "/vms/12/action", Status: 500, Body: "Internal server error"}
	d.Actions = refusingActions{other}
	if err := d.Attach(ctx, 118); errors.Is(err, ErrSelfActionForbidden) || !errors.Is(err, other) {
		t.Errorf("Attach on a 500: %v", err)
	}
	if err := d.Detach(ctx, 118); errors.Is(err, ErrLeftAttached) || !errors.Is(err, other) {
		t.Errorf("Detach on a 500: %v", err)
	}
}
