package upgrade

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/bundle"
	"github.com/onekube/onekube/agent/system/systemtest"
)

// fakeCluster is the plan ConfigMap and this node's annotations.
type fakeCluster struct {
	data   map[string]string
	claims []string
	errs   []string
}

func (f *fakeCluster) ReadPlan(context.Context) (map[string]string, bool, error) {
	return f.data, f.data != nil, nil
}

func (f *fakeCluster) Annotate(_ context.Context, claim, errText string) error {
	f.claims = append(f.claims, claim)
	f.errs = append(f.errs, errText)
	return nil
}

// fakeVM is this VM's disks: attaching the image makes the label show
// (after attachDelay Find calls), mounting copies the bundle in.
type fakeVM struct {
	src              string // the bundle's files
	attached         bool
	attachDelay      int
	attaches, detach int
	mounted          bool
}

func (f *fakeVM) Attach(context.Context, int) error { f.attaches++; f.attached = true; return nil }
func (f *fakeVM) Detach(context.Context, int) error { f.detach++; f.attached = false; return nil }

func (f *fakeVM) Find(context.Context, string) (string, bool, error) {
	if f.attached && f.attachDelay > 0 {
		f.attachDelay--
		return "", false, nil
	}
	return "/dev/vdb", f.attached, nil
}

func (f *fakeVM) Mount(_ context.Context, dev, dir string) error {
	if f.mounted {
		return nil
	}
	f.mounted = true
	return os.CopyFS(dir, os.DirFS(f.src))
}

func (f *fakeVM) Unmount(_ context.Context, dir string) error {
	f.mounted = false
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	return nil
}

type fakePublisher struct{ steps []string }

func (f *fakePublisher) Publish(_ context.Context, step, _ string) error {
	f.steps = append(f.steps, step)
	return nil
}

// writeTestBundle lays out a bundle for version and returns its dir and
// manifest sha256.
func writeTestBundle(t *testing.T, version string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	for p, body := range map[string]string{"bin/kubeadm": "new kubeadm", "bin/kubelet": "new kubelet", "bin/kubectl": "new kubectl", "images/kube-apiserver.tar": "a", "images/etcd.tar": "e"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o755&^0o111|map[bool]os.FileMode{true: 0o111}[strings.HasPrefix(p, "bin/")]); err != nil {
			t.Fatal(err)
		}
	}
	m, err := bundle.FromDir(dir, version)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := bundle.Marshal(m)
	os.WriteFile(filepath.Join(dir, bundle.ManifestName), raw, 0o644)
	return dir, bundle.HashBytes(raw)
}

type rig struct {
	e       *Executor
	cluster *fakeCluster
	vm      *fakeVM
	exec    *systemtest.FakeExec
	pub     *fakePublisher
	bin     string
}

func newRig(t *testing.T, version string, mode Mode) *rig {
	src, sum := writeTestBundle(t, version)
	base := t.TempDir()
	bin := filepath.Join(base, "bin")
	os.Mkdir(bin, 0o755)
	for _, b := range []string{"kubeadm", "kubelet", "kubectl"} {
		os.WriteFile(filepath.Join(bin, b), []byte("old "+b), 0o755)
	}
	p := Plan{Target: v("v1.37.2"), BundleImage: 42, BundleSHA: sum, Attempt: 1}
	data := p.Data()
	data[KeyGrantPrefix+"m1"] = string(mode)
	r := &rig{
		cluster: &fakeCluster{data: data},
		vm:      &fakeVM{src: src, attachDelay: 2},
		exec:    (&systemtest.FakeExec{}).On("ctr", systemtest.Reply{}).On("systemctl", systemtest.Reply{}).On(filepath.Join(bin, "kubeadm"), systemtest.Reply{}),
		pub:     &fakePublisher{},
		bin:     bin,
	}
	r.e = &Executor{
		NodeName: "m1", Plan: r.cluster, Disks: r.vm, Mounter: r.vm, Exec: r.exec, Publish: r.pub,
		Clock:     systemtest.NewClock(time.Unix(0, 0)),
		StateFile: filepath.Join(base, "upgrade-node.json"), MountDir: filepath.Join(base, "mnt"), BinDir: bin,
		AttachWait: time.Minute,
	}
	return r
}

func (r *rig) commands() []string {
	var out []string
	for _, c := range r.exec.Calls {
		out = append(out, strings.TrimPrefix(strings.Join(append([]string{c.Name}, c.Args...), " "), r.bin+"/"))
	}
	return out
}

func (r *rig) binary(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join(r.bin, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExecutorFullRun(t *testing.T) {
	r := newRig(t, "v1.37.2", ModeApply)
	if err := r.e.RunOnce(context.Background()); err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	want := []string{
		"ctr -n k8s.io images import " + filepath.Join(r.e.MountDir, "images/etcd.tar"),
		"ctr -n k8s.io images import " + filepath.Join(r.e.MountDir, "images/kube-apiserver.tar"),
		"kubeadm upgrade apply -y v1.37.2 --certificate-renewal=true",
		"systemctl daemon-reload", "systemctl restart kubelet",
	}
	if got := r.commands(); !reflect.DeepEqual(got, want) {
		t.Fatalf("commands =\n %q\nwant\n %q", got, want)
	}
	if !r.exec.Calls[2].Scrub {
		t.Error("kubeadm ran without output scrubbing")
	}
	for _, b := range []string{"kubeadm", "kubelet", "kubectl"} {
		if got := r.binary(t, b); got != "new "+b {
			t.Errorf("%s = %q", b, got)
		}
	}
	var steps []string
	for _, s := range Steps {
		steps = append(steps, "v1.37.2 "+string(s))
	}
	if !reflect.DeepEqual(r.cluster.claims, steps) || !reflect.DeepEqual(r.pub.steps, steps) {
		t.Fatalf("claims = %q\npublished %q", r.cluster.claims, r.pub.steps)
	}
	if r.vm.attaches != 1 || r.vm.detach != 1 || r.vm.mounted {
		t.Fatalf("disk: %+v", r.vm)
	}
	if fi, err := os.Stat(r.e.StateFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi, err)
	}
	// Done is done: another tick runs nothing; a restarted executor says
	// done once more (the claim may have been lost), then stays quiet.
	claims := len(r.cluster.claims)
	if err := r.e.RunOnce(context.Background()); err != nil || len(r.exec.Calls) != 5 || len(r.cluster.claims) != claims {
		t.Fatalf("second RunOnce: %v, %d calls, claims %q", err, len(r.exec.Calls), r.cluster.claims[claims:])
	}
	r.e.doneClaimed = ""
	for i := 0; i < 2; i++ {
		if err := r.e.RunOnce(context.Background()); err != nil || len(r.exec.Calls) != 5 {
			t.Fatalf("RunOnce after a restart: %v", err)
		}
	}
	if got := r.cluster.claims[claims:]; len(got) != 1 || got[0] != "v1.37.2 done" {
		t.Fatalf("claims after a restart: %q", got)
	}
}

func TestExecutorWorkerRunsUpgradeNode(t *testing.T) {
	r := newRig(t, "v1.37.2", ModeNode)
	if err := r.e.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.exec.Count(filepath.Join(r.bin, "kubeadm")+" upgrade node") != 1 || r.exec.Count(filepath.Join(r.bin, "kubeadm")+" upgrade apply") != 0 {
		t.Fatalf("commands %q", r.commands())
	}
}

// The operator's preflight ignores reach kubeadm upgrade as they reached
// its init and join; none adds no flag.
func TestExecutorIgnorePreflight(t *testing.T) {
	cases := []struct {
		mode   Mode
		ignore []string
		want   string
	}{
		{ModeApply, nil, "kubeadm upgrade apply -y v1.37.2 --certificate-renewal=true"},
		{ModeApply, []string{"SystemVerification"}, "kubeadm upgrade apply -y v1.37.2 --certificate-renewal=true --ignore-preflight-errors=SystemVerification"},
		{ModeNode, nil, "kubeadm upgrade node"},
		{ModeNode, []string{"SystemVerification", "NumCPU"}, "kubeadm upgrade node --ignore-preflight-errors=SystemVerification,NumCPU"},
	}
	for _, c := range cases {
		r := newRig(t, "v1.37.2", c.mode)
		r.e.IgnorePreflight = c.ignore
		if err := r.e.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := r.commands(); !slices.Contains(got, c.want) {
			t.Errorf("%s %v: commands %q, want %q", c.mode, c.ignore, got, c.want)
		}
	}
}

func TestExecutorWithoutGrantDoesNothing(t *testing.T) {
	r := newRig(t, "v1.37.2", ModeApply)
	delete(r.cluster.data, KeyGrantPrefix+"m1")
	r.cluster.data[KeyGrantPrefix+"m2"] = string(ModeApply) // another node's grant is not ours
	if err := r.e.RunOnce(context.Background()); err != nil || len(r.exec.Calls) != 0 || r.vm.attaches != 0 || len(r.cluster.claims) != 0 {
		t.Fatalf("RunOnce without a grant: %v, calls %q, attaches %d", err, r.commands(), r.vm.attaches)
	}
	r.cluster.data = nil
	if err := r.e.RunOnce(context.Background()); err != nil || len(r.exec.Calls) != 0 {
		t.Fatalf("RunOnce without a plan: %v", err)
	}
}

func TestExecutorFailureStopsThenNewAttemptResumes(t *testing.T) {
	r := newRig(t, "v1.37.2", ModeApply)
	r.exec.Replies[filepath.Join(r.bin, "kubeadm")] = []systemtest.Reply{{Code: 1, Stderr: "[ERROR] etcd is unhealthy"}, {}}
	err := r.e.RunOnce(context.Background())
	if err == nil || !strings.Contains(err.Error(), "kubeadm-upgrade") {
		t.Fatalf("RunOnce = %v, want the kubeadm step's failure", err)
	}
	last := len(r.cluster.claims) - 1
	if r.cluster.claims[last] != "v1.37.2 failed" || !strings.Contains(r.cluster.errs[last], "kubeadm-upgrade: ") || !strings.Contains(r.cluster.errs[last], "etcd is unhealthy") {
		t.Fatalf("reported %q / %q", r.cluster.claims[last], r.cluster.errs[last])
	}
	if got := r.binary(t, "kubelet"); got != "old kubelet" {
		t.Fatalf("kubelet swapped after a failed kubeadm step: %q", got)
	}
	// The same attempt: stopped, nothing runs.
	n := len(r.exec.Calls)
	if err := r.e.RunOnce(context.Background()); err != nil || len(r.exec.Calls) != n {
		t.Fatalf("rerun in the same attempt: %v, %q", err, r.commands()[n:])
	}
	// The owner runs the CLI again: a new attempt resumes at the failed
	// step, with the bundle verified again and the images not re-imported.
	r.cluster.data[KeyAttempt] = strconv.Itoa(2)
	if err := r.e.RunOnce(context.Background()); err != nil {
		t.Fatalf("resumed RunOnce: %v", err)
	}
	want := []string{"kubeadm upgrade apply -y v1.37.2 --certificate-renewal=true", "systemctl daemon-reload", "systemctl restart kubelet"}
	if got := r.commands()[n:]; !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed commands = %q, want %q", got, want)
	}
	if r.cluster.claims[len(r.cluster.claims)-1] != "v1.37.2 done" || r.binary(t, "kubelet") != "new kubelet" {
		t.Fatalf("not done after resume: %q", r.cluster.claims)
	}
}

func TestExecutorResumesAfterCrash(t *testing.T) {
	for _, done := range []Step{"", StepAttach, StepVerify, StepImages, StepUpgrade, StepKubelet, StepDetach} {
		t.Run("after "+string(done), func(t *testing.T) {
			r := newRig(t, "v1.37.2", ModeNode)
			sum := r.cluster.data[KeyBundleSHA256]
			if err := SaveNodeState(r.e.StateFile, NodeState{Target: "v1.37.2", BundleSHA: sum, Done: done}); err != nil {
				t.Fatal(err)
			}
			// A reboot: the disk may still be attached, nothing is mounted.
			r.vm.attached = stepIndex(done) >= stepIndex(StepAttach) && done != StepDetach
			if err := r.e.RunOnce(context.Background()); err != nil {
				t.Fatalf("RunOnce: %v", err)
			}
			if r.cluster.claims[len(r.cluster.claims)-1] != "v1.37.2 done" {
				t.Fatalf("claims %q", r.cluster.claims)
			}
			kubeadm := r.exec.Count(filepath.Join(r.bin, "kubeadm"))
			if wantKubeadm := map[bool]int{true: 1, false: 0}[stepIndex(done) < stepIndex(StepUpgrade)]; kubeadm != wantKubeadm {
				t.Fatalf("kubeadm ran %d times, want %d", kubeadm, wantKubeadm)
			}
			if r.vm.attaches > 1 || (r.vm.attached && done != StepDetach) {
				t.Fatalf("disk: %+v", r.vm)
			}
		})
	}
}

func TestExecutorRefusesBadBundle(t *testing.T) {
	for name, tc := range map[string]struct {
		version string
		spoil   func(r *rig)
		want    string
	}{
		"another release": {version: "v1.37.1", want: "not-in-bundle"},
		"manifest not pinned": {version: "v1.37.2", spoil: func(r *rig) {
			r.cluster.data[KeyBundleSHA256] = strings.Repeat("b", 64)
		}, want: "the upgrade plan pins"},
		"a binary swapped on the image": {version: "v1.37.2", spoil: func(r *rig) {
			os.WriteFile(filepath.Join(r.vm.src, "bin/kubeadm"), []byte("evil"), 0o755)
		}, want: "bin/kubeadm has sha256"},
		"label never shows": {version: "v1.37.2", spoil: func(r *rig) { r.vm.attachDelay = 1 << 20 }, want: "showed within 1m0s"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, tc.version, ModeApply)
			if tc.spoil != nil {
				tc.spoil(r)
			}
			err := r.e.RunOnce(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RunOnce = %v, want %q", err, tc.want)
			}
			if len(r.exec.Calls) != 0 || r.binary(t, "kubeadm") != "old kubeadm" {
				t.Fatalf("acted on a bad bundle: %q", r.commands())
			}
			if r.cluster.claims[len(r.cluster.claims)-1] != "v1.37.2 failed" {
				t.Fatalf("claims %q", r.cluster.claims)
			}
		})
	}
}

func TestNextSteps(t *testing.T) {
	for _, tc := range []struct {
		done Step
		want []Step
	}{
		{"", Steps},
		{StepMount, []Step{StepAttach, StepMount, StepVerify, StepKubeadm, StepImages, StepUpgrade, StepKubelet, StepDetach, StepDone}},
		{StepImages, []Step{StepAttach, StepMount, StepVerify, StepUpgrade, StepKubelet, StepDetach, StepDone}},
		{StepKubelet, []Step{StepDetach, StepDone}},
		{StepDone, []Step{}},
	} {
		if got := NextSteps(NodeState{Done: tc.done}); !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("NextSteps(%s) = %v, want %v", tc.done, got, tc.want)
		}
	}
}
