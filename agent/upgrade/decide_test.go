package upgrade

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/kversion"
)

func v(s string) kversion.Version {
	x, err := kversion.ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return x
}

var target = Plan{Target: v("v1.37.2"), BundleImage: 7, BundleSHA: strings.Repeat("a", 64)}

// node builds a view: cp marks a control plane, ver its kubelet, step its
// claim for the target ("" for none).
func node(name string, cp bool, ver string, step Step) NodeView {
	n := NodeView{NodeVersion: NodeVersion{Name: name, ControlPlane: cp, Version: v(ver)}, Ready: true}
	if step != "" {
		n.Claim, n.HasClaim = StepClaim{v("v1.37.2"), step}, true
	}
	return n
}

func TestDecide(t *testing.T) {
	old, neu := "v1.36.3", "v1.37.2"
	cluster := func(m1, m2, m3, w1, w2 NodeView) []NodeView { return []NodeView{w2, m3, w1, m1, m2} }
	fresh := cluster(node("m1", true, old, ""), node("m2", true, old, ""), node("m3", true, old, ""), node("w1", false, old, ""), node("w2", false, old, ""))
	cpsDone := cluster(node("m1", true, neu, StepDone), node("m2", true, neu, StepDone), node("m3", true, neu, StepDone), node("w1", false, old, ""), node("w2", false, old, ""))
	for name, tc := range map[string]struct {
		nodes  []NodeView
		r      Rollout
		health error
		want   []Action
	}{
		"first control plane runs apply": {
			nodes: fresh,
			want:  []Action{{Kind: ActDrain, Node: "m1"}, {Kind: ActGrant, Node: "m1", Mode: ModeApply}},
		},
		"one control plane at a time": {
			nodes: cluster(node("m1", true, old, StepUpgrade), node("m2", true, old, ""), node("m3", true, old, ""), node("w1", false, old, ""), node("w2", false, old, "")),
			r:     Rollout{Grants: map[string]Mode{"m1": ModeApply}, Cordoned: map[string]bool{"m1": true}},
			want:  nil,
		},
		"a done control plane is uncordoned, the next runs upgrade node": {
			nodes: cluster(node("m1", true, neu, StepDone), node("m2", true, old, ""), node("m3", true, old, ""), node("w1", false, old, ""), node("w2", false, old, "")),
			r:     Rollout{Grants: map[string]Mode{"m1": ModeApply}, Cordoned: map[string]bool{"m1": true}},
			want:  []Action{{Kind: ActUncordon, Node: "m1"}, {Kind: ActDrain, Node: "m2"}, {Kind: ActGrant, Node: "m2", Mode: ModeNode}},
		},
		"done claim without the new kubelet is not done": {
			nodes: cluster(node("m1", true, old, StepDone), node("m2", true, old, ""), node("m3", true, old, ""), node("w1", false, old, ""), node("w2", false, old, "")),
			r:     Rollout{Grants: map[string]Mode{"m1": ModeApply}},
			want:  nil,
		},
		"crash between drain and grant: apply again on the same master": {
			nodes: fresh,
			r:     Rollout{Cordoned: map[string]bool{"m1": true}},
			want:  []Action{{Kind: ActDrain, Node: "m1"}, {Kind: ActGrant, Node: "m1", Mode: ModeApply}},
		},
		"workers only after every control plane": {
			nodes: cpsDone,
			r:     Rollout{Batch: 1},
			want:  []Action{{Kind: ActDrain, Node: "w1"}, {Kind: ActGrant, Node: "w1", Mode: ModeNode}},
		},
		"worker batch is capped at half": {
			nodes: cpsDone,
			r:     Rollout{Batch: 5},
			want:  []Action{{Kind: ActDrain, Node: "w1"}, {Kind: ActGrant, Node: "w1", Mode: ModeNode}},
		},
		"a worker in flight fills the batch": {
			nodes: cluster(node("m1", true, neu, StepDone), node("m2", true, neu, StepDone), node("m3", true, neu, StepDone), node("w1", false, old, StepImages), node("w2", false, old, "")),
			r:     Rollout{Batch: 1, Grants: map[string]Mode{"w1": ModeNode}},
			want:  nil,
		},
		"finish": {
			nodes: cluster(node("m1", true, neu, StepDone), node("m2", true, neu, StepDone), node("m3", true, neu, StepDone), node("w1", false, neu, StepDone), node("w2", false, neu, StepDone)),
			r:     Rollout{Grants: map[string]Mode{"w2": ModeNode}, Cordoned: map[string]bool{"w2": true}},
			want:  []Action{{Kind: ActUncordon, Node: "w2"}, {Kind: ActFinish}},
		},
		"stopped waits for the owner": {nodes: fresh, r: Rollout{Stopped: "x"}, want: nil},
		"unhealthy before a new node: stop": {
			nodes: fresh, health: errors.New("etcd sick"),
			want: []Action{{Kind: ActStop, Reason: "etcd sick"}},
		},
		"unhealthy while a node is mid-step: wait, do not abandon it": {
			nodes:  cluster(node("m1", true, old, StepUpgrade), node("m2", true, old, ""), node("m3", true, old, ""), node("w1", false, old, ""), node("w2", false, old, "")),
			r:      Rollout{Grants: map[string]Mode{"m1": ModeApply}},
			health: errors.New("VM 3 is not RUNNING"),
			want:   nil,
		},
	} {
		t.Run(name, func(t *testing.T) {
			health := func() error { return tc.health }
			if got := Decide(target, tc.r, tc.nodes, health); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decide =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

func TestDecideStops(t *testing.T) {
	failed := node("m1", true, "v1.36.3", StepFailed)
	failed.Error = "kubeadm upgrade exited 1: etcd unreachable"
	for name, tc := range map[string]struct {
		nodes []NodeView
		r     Rollout
		want  string
	}{
		"a failed node stops the rollout": {
			nodes: []NodeView{failed, node("m2", true, "v1.36.3", "")},
			r:     Rollout{Grants: map[string]Mode{"m1": ModeApply}},
			want:  "node-failed): node m1: kubeadm upgrade exited 1",
		},
		"skipped minor": {
			nodes: []NodeView{node("m1", true, "v1.35.9", "")},
			want:  "(skipped-minor): node m1 runs v1.35.9; v1.37.2 would skip v1.36",
		},
		"downgrade": {
			nodes: []NodeView{node("m1", true, "v1.38.0", "")},
			want:  "(downgrade): node m1 runs v1.38.0, newer than the target v1.37.2",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := Decide(target, tc.r, tc.nodes, nil)
			if len(got) == 0 || got[len(got)-1].Kind != ActStop || !strings.Contains(got[len(got)-1].Reason, tc.want) {
				t.Fatalf("Decide = %+v, want a stop naming %q", got, tc.want)
			}
		})
	}
}

// A node-failed stop leaves a serving cluster: each failed node is
// released (uncordoned if serve cordoned it, its grant withdrawn), done
// nodes are uncordoned, and nothing new is let go. Re-granting a node
// that still claims its old failure clears that claim first.
func TestDecideReleasesFailedNodes(t *testing.T) {
	old, neu := "v1.36.3", "v1.37.2"
	failed := func(name string, cp bool, ver string) NodeView {
		n := node(name, cp, ver, StepFailed)
		n.Error = "kubeadm-upgrade: exited 1"
		return n
	}
	stop := func(node string) Action {
		return Action{Kind: ActStop, Reason: "upgrade refused (node-failed): node " + node + ": kubeadm-upgrade: exited 1"}
	}
	for name, tc := range map[string]struct {
		nodes []NodeView
		r     Rollout
		want  []Action
	}{
		"first control plane failed apply": {
			nodes: []NodeView{failed("m1", true, old), node("m2", true, old, ""), node("w1", false, old, "")},
			r:     Rollout{Grants: map[string]Mode{"m1": ModeApply}, Cordoned: map[string]bool{"m1": true}},
			want:  []Action{{Kind: ActRelease, Node: "m1"}, stop("m1")},
		},
		"failed after its kubelet was swapped (detach)": {
			nodes: []NodeView{node("m1", true, neu, StepDone), failed("m2", true, neu), node("w1", false, old, "")},
			r:     Rollout{Grants: map[string]Mode{"m1": ModeApply, "m2": ModeNode}, Cordoned: map[string]bool{"m2": true}},
			want:  []Action{{Kind: ActRelease, Node: "m2"}, stop("m2")},
		},
		"a batch: one failed, one done, one working": {
			nodes: []NodeView{node("m1", true, neu, StepDone), failed("w1", false, old), node("w2", false, neu, StepDone), node("w3", false, old, StepKubeadm), node("w4", false, old, "")},
			r: Rollout{Grants: map[string]Mode{"m1": ModeApply, "w1": ModeNode, "w2": ModeNode, "w3": ModeNode}, Batch: 3,
				Cordoned: map[string]bool{"w1": true, "w2": true, "w3": true}},
			want: []Action{{Kind: ActUncordon, Node: "w2"}, {Kind: ActRelease, Node: "w1"}, stop("w1")},
		},
		"two failed: both released, the first named": {
			nodes: []NodeView{node("m1", true, neu, StepDone), failed("w2", false, old), failed("w1", false, old)},
			r:     Rollout{Grants: map[string]Mode{"m1": ModeApply, "w1": ModeNode, "w2": ModeNode}, Batch: 2, Cordoned: map[string]bool{"w1": true, "w2": true}},
			want:  []Action{{Kind: ActRelease, Node: "w1"}, {Kind: ActRelease, Node: "w2"}, stop("w1")},
		},
		"a failure without a grant is no stop: the owner's rerun drains and re-grants, clearing the old claim": {
			nodes: []NodeView{failed("m1", true, old), node("m2", true, old, "")},
			r:     Rollout{Grants: map[string]Mode{}, Cordoned: map[string]bool{}},
			want:  []Action{{Kind: ActDrain, Node: "m1"}, {Kind: ActGrant, Node: "m1", Mode: ModeApply, ClearClaim: true}},
		},
		"a released worker is re-granted with its old claim cleared": {
			nodes: []NodeView{node("m1", true, neu, StepDone), failed("w1", false, old)},
			r:     Rollout{Grants: map[string]Mode{"m1": ModeApply}, Cordoned: map[string]bool{}},
			want:  []Action{{Kind: ActDrain, Node: "w1"}, {Kind: ActGrant, Node: "w1", Mode: ModeNode, ClearClaim: true}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Decide(target, tc.r, tc.nodes, nil); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decide =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

func TestCheckVersions(t *testing.T) {
	for _, tc := range []struct {
		target string
		nodes  []string
		code   string
	}{
		{"v1.37.2", []string{"v1.36.3", "v1.36.3"}, ""},
		{"v1.36.9", []string{"v1.36.3"}, ""},                         // a patch
		{"v1.37.2", []string{"v1.37.2", "v1.36.3"}, ""},              // resumed half-way
		{"v1.37.2", []string{"v1.37.2"}, ""},                         // nothing to do
		{"v1.38.0", []string{"v1.36.3"}, "skipped-minor"},            // one minor at a time
		{"v1.38.0", []string{"v1.37.2", "v1.36.3"}, "skipped-minor"}, // a worker left behind
		{"v1.36.3", []string{"v1.37.2"}, "downgrade"},
		{"v1.37.1", []string{"v1.37.2"}, "downgrade"}, // patch downgrade
		{"v2.0.0", []string{"v1.37.2"}, "skipped-minor"},
	} {
		var ns []NodeVersion
		for i, s := range tc.nodes {
			ns = append(ns, NodeVersion{Name: string(rune('a' + i)), Version: v(s)})
		}
		err := CheckVersions(v(tc.target), ns)
		var r *Refusal
		if tc.code == "" && err != nil || tc.code != "" && (!errors.As(err, &r) || r.Code != tc.code) {
			t.Errorf("CheckVersions(%s, %v) = %v, want code %q", tc.target, tc.nodes, err, tc.code)
		}
	}
}

func TestRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		code string
	}{
		"running":          {CheckStates(2, []VMState{{1, 3, 3}, {2, 3, 3}}), ""},
		"service warning":  {CheckStates(4, []VMState{{1, 3, 3}}), "service-state"},
		"service cooldown": {CheckStates(10, nil), "service-state"},
		"vm poweroff":      {CheckStates(2, []VMState{{1, 3, 3}, {2, 8, 0}}), "vm-state"},
		"vm unknown":       {CheckStates(2, []VMState{{5, 3, 16}}), "vm-state"},
		"etcd healthy":     {CheckEtcd(3, 3), ""},
		"etcd one sick":    {CheckEtcd(3, 2), "etcd"},
		"etcd silent":      {CheckEtcd(0, 0), "etcd"},
		"bundle matches":   {CheckBundle(v("v1.37.2"), v("v1.37.2")), ""},
		"bundle other":     {CheckBundle(v("v1.37.2"), v("v1.37.1")), "not-in-bundle"},
	} {
		var r *Refusal
		if tc.code == "" && tc.err != nil || tc.code != "" && (!errors.As(tc.err, &r) || r.Code != tc.code) {
			t.Errorf("%s: %v, want code %q", name, tc.err, tc.code)
		}
	}
}

func TestBatchSize(t *testing.T) {
	for _, tc := range []struct{ workers, req, want int }{
		{0, 1, 1}, {1, 1, 1}, {1, 3, 1}, {2, 2, 1}, {4, 2, 2}, {4, 3, 2}, {10, 0, 1}, {10, -1, 1}, {10, 4, 4},
	} {
		if got := BatchSize(tc.workers, tc.req); got != tc.want {
			t.Errorf("BatchSize(%d, %d) = %d, want %d", tc.workers, tc.req, got, tc.want)
		}
	}
}

func TestPlanRoundTrip(t *testing.T) {
	got, err := ParsePlan(target.Data())
	if err != nil || got != target {
		t.Fatalf("ParsePlan(Data) = %+v, %v", got, err)
	}
	for name, data := range map[string]map[string]string{
		"no target":   {KeyBundleImage: "7", KeyBundleSHA256: target.BundleSHA},
		"bad image":   {KeyTarget: "v1.37.2", KeyBundleImage: "x", KeyBundleSHA256: target.BundleSHA},
		"neg image":   {KeyTarget: "v1.37.2", KeyBundleImage: "-1", KeyBundleSHA256: target.BundleSHA},
		"bad sha":     {KeyTarget: "v1.37.2", KeyBundleImage: "7", KeyBundleSHA256: "abc"},
		"bad attempt": {KeyTarget: "v1.37.2", KeyBundleImage: "7", KeyBundleSHA256: target.BundleSHA, KeyAttempt: "x"},
	} {
		if _, err := ParsePlan(data); err == nil {
			t.Errorf("%s: ParsePlan accepted %v", name, data)
		}
	}
}

func TestStepClaim(t *testing.T) {
	for in, ok := range map[string]bool{
		"v1.37.2 done": true, "v1.37.2 failed": true, "v1.37.2 kubeadm-upgrade": true,
		"v1.37.2 bogus": false, "1.37.2 done": false, "v1.37.2": false, "": false,
	} {
		c, got := ParseStepClaim(in)
		if got != ok || ok && FormatStepClaim(c.Version, c.Step) != in {
			t.Errorf("ParseStepClaim(%q) = %+v, %v", in, c, got)
		}
	}
	g := Grants(map[string]string{"grant.m1": "apply", "grant.w1": "node", "grant.w2": "rm -rf", KeyTarget: "v1.37.2"})
	if !reflect.DeepEqual(g, map[string]Mode{"m1": ModeApply, "w1": ModeNode}) {
		t.Fatalf("Grants = %v", g)
	}
}

func TestNextPlanData(t *testing.T) {
	other := target
	other.Target = v("v1.37.3")
	running := target.Data()
	running[KeyGrantPrefix+"m1"] = "apply"
	running[KeyCordonPrefix+"m1"] = "true"
	running[KeyStopped] = "upgrade refused (etcd): 2 of 3"
	done := target.Data()
	done[KeyGrantPrefix+"m1"] = "apply"
	done[KeyPhase] = PhaseDone
	for name, tc := range map[string]struct {
		existing map[string]string
		p        Plan
		want     map[string]string // keys checked
		absent   []string
		err      string
	}{
		"first run": {p: target, want: map[string]string{KeyAttempt: "1", KeyTarget: "v1.37.2", KeyBatch: "2"}},
		"rerun continues": {existing: running, p: target,
			want:   map[string]string{KeyAttempt: "1", KeyGrantPrefix + "m1": "apply", KeyCordonPrefix + "m1": "true"},
			absent: []string{KeyStopped}},
		"another target mid-way": {existing: running, p: other, err: "(in-progress): an upgrade to v1.37.2"},
		"after a finished one": {existing: done, p: other,
			want:   map[string]string{KeyTarget: "v1.37.3", KeyAttempt: "1"},
			absent: []string{KeyGrantPrefix + "m1", KeyPhase}},
		"corrupt plan replaced": {existing: map[string]string{KeyTarget: "x", KeyCordonPrefix + "w1": "true"}, p: target,
			want: map[string]string{KeyTarget: "v1.37.2", KeyAttempt: "1", KeyCordonPrefix + "w1": "true"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := NextPlanData(tc.existing, tc.p, 2)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q (%v)", k, got[k], v, got)
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s kept: %v", k, got)
				}
			}
		})
	}
}
