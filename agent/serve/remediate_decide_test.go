package serve

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/onekube/onekube/context/onegate"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func readyNode(status corev1.ConditionStatus, since time.Time) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(since)}}},
	}
}

// Unhealthy detection: only oned's states and the provider-ID Node count.
func TestJudge(t *testing.T) {
	cfg := DefaultRemediateConfig
	now := t0
	running := func(m member) member { m.State, m.LCM = onegate.StateActive, onegate.LCMRunning; return m }
	noCond := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: metav1.NewTime(now.Add(-20 * time.Minute))}}
	fresh := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))}}
	tests := []struct {
		name    string
		m       member
		want    string // substring of the reason; "" healthy
		trouble string
		failed  bool
	}{
		{"ready", running(member{Node: readyNode(corev1.ConditionTrue, now.Add(-time.Hour))}), "", "", false},
		{"not ready 4m59s", running(member{Node: readyNode(corev1.ConditionFalse, now.Add(-5*time.Minute+time.Second))}), "", "", false},
		{"not ready 5m", running(member{Node: readyNode(corev1.ConditionFalse, now.Add(-5*time.Minute))}), "Ready=False for 5m0s", "", false},
		{"unknown 10m", running(member{Node: readyNode(corev1.ConditionUnknown, now.Add(-10*time.Minute))}), "Ready=Unknown for 10m0s", "", false},
		{"no Ready condition, young", running(member{Node: fresh}), "", "", false},
		{"no Ready condition past startup", running(member{Node: noCond}), "no Ready condition", "", false},
		{"no Node, clock not started", running(member{}), "", "", false},
		{"no Node 14m", running(member{NoNodeSince: now.Add(-14 * time.Minute)}), "", "", false},
		{"no Node 15m", running(member{NoNodeSince: now.Add(-15 * time.Minute)}), "no Node 15m0s after the VM ran", "", false},
		{"no Node 15m but an older Node claims it", running(member{Claimed: true, NoNodeSince: now.Add(-time.Hour)}), "", "", false},
		{"poweroff", member{State: onegate.StatePoweroff}, "VM is POWEROFF", "POWEROFF", false},
		{"unknown VM, Node ready", member{State: onegate.StateActive, LCM: onegate.LCMUnknown, Node: readyNode(corev1.ConditionTrue, now)}, "VM is UNKNOWN", "UNKNOWN", false},
		{"boot failure", member{State: onegate.StateActive, LCM: 36}, "VM is BOOT_FAILURE", "BOOT_FAILURE", true},
		{"prolog migrate unknown failure", member{State: onegate.StateActive, LCM: 61}, "PROLOG_MIGRATE_UNKNOWN_FAILURE", "PROLOG_MIGRATE_UNKNOWN_FAILURE", true},
		{"shutting down, Node dead", member{State: onegate.StateActive, LCM: onegate.LCMShutdown, Node: readyNode(corev1.ConditionUnknown, now.Add(-time.Hour))}, "", "", false},
		{"stopped by the owner", member{State: onegate.StateStopped}, "", "", false},
		{"undeployed", member{State: onegate.StateUndeployed}, "", "", false},
		{"pending", member{State: onegate.StatePending, NoNodeSince: now.Add(-time.Hour)}, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := judge(tt.m, now, cfg)
			if (tt.want == "") != (h.Reason == "") || !strings.Contains(h.Reason, tt.want) {
				t.Errorf("reason %q, want %q", h.Reason, tt.want)
			}
			if h.Trouble != tt.trouble || h.Failed != tt.failed {
				t.Errorf("trouble %q failed %v, want %q %v", h.Trouble, h.Failed, tt.trouble, tt.failed)
			}
		})
	}
}

// The configured timeouts are the ones applied.
func TestJudgeConfigurable(t *testing.T) {
	cfg := DefaultRemediateConfig
	cfg.UnhealthyAfter, cfg.StartupTimeout = time.Minute, 2*time.Minute
	m := member{State: onegate.StateActive, LCM: onegate.LCMRunning, Node: readyNode(corev1.ConditionFalse, t0.Add(-time.Minute))}
	if judge(m, t0, cfg).Reason == "" {
		t.Error("Ready=False for 1m with UnhealthyAfter 1m: want unhealthy")
	}
	m = member{State: onegate.StateActive, LCM: onegate.LCMRunning, NoNodeSince: t0.Add(-2 * time.Minute)}
	if judge(m, t0, cfg).Reason == "" {
		t.Error("no Node for 2m with StartupTimeout 2m: want unhealthy")
	}
}

// The ladder's rung for each record and VM.
func TestClimb(t *testing.T) {
	cfg := DefaultRemediateConfig
	now := t0
	sick := health{Reason: "Node n Ready=Unknown for 6m"}
	off := health{Reason: "VM is POWEROFF", Trouble: "POWEROFF"}
	failed := health{Reason: "VM is BOOT_FAILURE", Trouble: "BOOT_FAILURE", Failed: true}
	at := func(s step, ago time.Duration) *ladder {
		return &ladder{Step: s, At: now.Add(-ago), Role: "worker", Cardinality: 3}
	}
	tests := []struct {
		name string
		rec  *ladder
		v    vmNow
		want step
	}{
		{"healthy, no record", nil, vmNow{InService: true}, stepNone},
		{"NotReady: power off first", nil, vmNow{health: sick, InService: true}, stepPowerOff},
		{"POWEROFF outside: resume", nil, vmNow{health: off, InService: true, PoweredOff: true}, stepResume},
		{"UNKNOWN: resume", nil, vmNow{health: health{Reason: "VM is UNKNOWN", Trouble: "UNKNOWN"}, InService: true}, stepResume},
		{"failure: straight to replace", nil, vmNow{health: failed, InService: true}, stepReplace},
		{"poweroff sent, not off yet", at(stepPowerOff, time.Minute), vmNow{health: sick, InService: true}, stepWait},
		{"poweroff took", at(stepPowerOff, time.Minute), vmNow{health: off, InService: true, PoweredOff: true}, stepResume},
		{"poweroff never took", at(stepPowerOff, cfg.ActionTimeout), vmNow{health: sick, InService: true}, stepReplace},
		{"resumed, recovering", at(stepResume, time.Minute), vmNow{health: sick, InService: true}, stepWait},
		{"resumed and healthy", at(stepResume, time.Minute), vmNow{InService: true}, stepClear},
		{"resumed, still sick past the wait", at(stepResume, cfg.RecoverWait), vmNow{health: sick, InService: true}, stepReplace},
		{"resumed into a failure", at(stepResume, time.Minute), vmNow{health: failed, InService: true}, stepReplace},
		{"resumed VM left the service", at(stepResume, time.Minute), vmNow{}, stepClear},
		{"terminate sent, VM still listed", at(stepReplace, time.Minute), vmNow{health: sick, InService: true}, stepWait},
		{"terminate not taken: again", at(stepReplace, cfg.ActionTimeout), vmNow{health: sick, InService: true}, stepReplace},
		{"terminate never sent (At zero): again", &ladder{Step: stepReplace}, vmNow{health: sick, InService: true}, stepReplace},
		{"VM gone: scale", at(stepReplace, time.Minute), vmNow{}, stepScale},
		{"scale refused in COOLDOWN: wait", &ladder{Step: stepScale, Refused: "COOLDOWN", RefusedAt: now.Add(-time.Minute)}, vmNow{}, stepWait},
		{"scale refused, cooldown over: retry", &ladder{Step: stepScale, Refused: "COOLDOWN", RefusedAt: now.Add(-cfg.ScaleRetry)}, vmNow{}, stepScale},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := climb(tt.rec, tt.v, now, cfg); got.Do != tt.want {
				t.Errorf("climb = %q (%s), want %q", got.Do, got.Why, tt.want)
			}
		})
	}
}

// The cardinality is restored only while OneFlow would accept it.
func TestScaleVerdict(t *testing.T) {
	tests := []struct {
		name              string
		state, card, want int
		trouble           bool // a VM still POWEROFF, UNKNOWN or failed
		do, done          bool
		why               string
	}{
		{"running, one short", onegate.ServiceRunning, 2, 3, false, true, false, "2 to 3"},
		{"cooldown after OneFlow lowered it", onegate.ServiceCooldown, 2, 3, false, false, false, "COOLDOWN"},
		{"warning: another VM in trouble", onegate.ServiceWarning, 2, 3, true, false, false, "the service is WARNING"},
		{"sticky warning: the broken VM is gone", onegate.ServiceWarning, 2, 3, false, false, false, "power-cycles one VM of role worker"},
		{"scaling", onegate.ServiceScaling, 2, 3, false, false, false, "SCALING"},
		{"back already (min_vms rule)", onegate.ServiceCooldown, 3, 3, false, false, true, "as before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			do, done, why := scaleVerdict(tt.state, tt.card, tt.want, "worker", tt.trouble)
			if do != tt.do || done != tt.done || !strings.Contains(why, tt.why) {
				t.Errorf("scaleVerdict = %v %v %q, want %v %v ~%q", do, done, why, tt.do, tt.done, tt.why)
			}
		})
	}
}

func TestShortCircuit(t *testing.T) {
	cfg := DefaultRemediateConfig
	tests := []struct {
		name             string
		master           bool
		total, unhealthy int
		pct, maxMasters  int
		stop             bool
	}{
		{"workers 1 of 3 (33%)", false, 3, 1, 40, 1, false},
		{"workers 2 of 3 (67%)", false, 3, 2, 40, 1, true},
		{"workers 2 of 5 (40%)", false, 5, 2, 40, 1, false},
		{"workers 3 of 5 (60%)", false, 5, 3, 40, 1, true},
		{"workers 1 of 2 (50%)", false, 2, 1, 40, 1, true},
		{"workers 1 of 2 at 100%", false, 2, 1, 100, 1, false},
		{"workers none", false, 3, 0, 40, 1, false},
		{"masters 1 of 3", true, 3, 1, 40, 1, false},
		{"masters 2 of 5", true, 5, 2, 40, 1, true},
		{"masters 2 of 5, limit 2", true, 5, 2, 40, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg
			c.MaxUnhealthyWorkersPct, c.MaxUnhealthyMasters = tt.pct, tt.maxMasters
			if got := shortCircuit(tt.master, tt.total, tt.unhealthy, c); (got != "") != tt.stop {
				t.Errorf("shortCircuit = %q, want stop=%v", got, tt.stop)
			}
		})
	}
}

func TestQuorumGuard(t *testing.T) {
	tests := []struct {
		name             string
		masters, healthy int
		removal          bool
		ok               bool
	}{
		{"3 masters, 2 healthy: poweroff", 3, 2, false, true},
		{"3 masters, 2 healthy: remove", 3, 2, true, true},
		{"3 masters, 1 healthy: poweroff", 3, 1, false, false},
		{"3 masters, 1 healthy: remove (1 of 2 members)", 3, 1, true, false},
		{"2 masters, 1 healthy: poweroff (1 of 2)", 2, 1, false, false},
		{"2 masters, 1 healthy: remove (1 of 1)", 2, 1, true, true},
		{"1 master: never", 1, 0, true, false},
		{"1 master poweroff: never", 1, 0, false, false},
		{"5 masters, 3 healthy: remove (3 of 4)", 5, 3, true, true},
		{"5 masters, 2 healthy: remove (2 of 4)", 5, 2, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quorumGuard(tt.masters, tt.healthy, tt.removal); (got == "") != tt.ok {
				t.Errorf("quorumGuard = %q, want ok=%v", got, tt.ok)
			}
		})
	}
}

// Which rungs the pause, a short-circuit, self and quorum hold.
func TestBlockedBy(t *testing.T) {
	own := &ladder{Step: stepPowerOff}
	tests := []struct {
		name string
		in   gateIn
		want string // substring; "" allowed
	}{
		{"worker poweroff", gateIn{Do: stepPowerOff}, ""},
		{"waiting is never held", gateIn{Do: stepWait, Paused: "paused"}, ""},
		{"paused holds poweroff", gateIn{Do: stepPowerOff, Paused: "paused: x"}, "paused"},
		{"paused holds the scale", gateIn{Do: stepScale, Paused: "paused: x"}, "paused"},
		{"self", gateIn{Do: stepReplace, Self: true, Master: true, Masters: 3, SickMasters: 1, EtcdHelper: true}, "itself"},
		{"short-circuit holds a new poweroff", gateIn{Do: stepPowerOff, Stopped: "2 of 3 workers"}, "2 of 3"},
		{"short-circuit holds a replace", gateIn{Do: stepReplace, Rec: &ladder{Step: stepResume}, Stopped: "2 of 3 workers"}, "2 of 3"},
		{"short-circuit holds resuming a VM powered off outside", gateIn{Do: stepResume, Stopped: "2 of 3 workers"}, "2 of 3"},
		{"short-circuit lets our own poweroff be resumed", gateIn{Do: stepResume, Rec: own, Stopped: "2 of 3 workers"}, ""},
		{"short-circuit lets the cardinality be restored", gateIn{Do: stepScale, Rec: &ladder{Step: stepScale}, Stopped: "2 of 3 workers"}, ""},
		{"master poweroff, quorum holds", gateIn{Do: stepPowerOff, Master: true, Masters: 3, SickMasters: 1}, ""},
		{"master poweroff, quorum would break", gateIn{Do: stepPowerOff, Master: true, Masters: 2, SickMasters: 1}, "quorum"},
		{"master replace without etcd helper", gateIn{Do: stepReplace, Master: true, Masters: 3, SickMasters: 1}, "etcd membership"},
		{"master replace, quorum holds", gateIn{Do: stepReplace, Master: true, Masters: 3, SickMasters: 1, EtcdHelper: true}, ""},
		{"the only master", gateIn{Do: stepReplace, Master: true, Masters: 1, SickMasters: 1, EtcdHelper: true}, "only master"},
		{"one master at a time", gateIn{Do: stepPowerOff, Master: true, Masters: 5, SickMasters: 1, OtherMaster: true}, "one at a time"},
		{"a master already on the ladder goes on", gateIn{Do: stepResume, Rec: own, Master: true, Masters: 5, SickMasters: 1, OtherMaster: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := blockedBy(tt.in)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("blockedBy = %q, want ~%q", got, tt.want)
			}
		})
	}
}

func TestParseRemediationSwitch(t *testing.T) {
	for in, want := range map[string]bool{"": true, "on": true, " ON ": true, "yes": true, "off": false, "Off": false, "no": false} {
		got, err := ParseRemediationSwitch(in)
		if err != nil || got != want {
			t.Errorf("ParseRemediationSwitch(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"paused", "0", "true", "of"} {
		if on, err := ParseRemediationSwitch(in); err == nil || on {
			t.Errorf("ParseRemediationSwitch(%q) = %v, %v; want an error and off", in, on, err)
		}
	}
}

func FuzzParseRemediationSwitch(f *testing.F) {
	for _, s := range []string{"", "on", "off", "OFF", "paused", "\x00", strings.Repeat("x", 500)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		on, err := ParseRemediationSwitch(s)
		if err != nil && on {
			t.Fatalf("%q: an unreadable switch must leave remediation off", s)
		}
		if err != nil && len(err.Error()) > 120 {
			t.Fatalf("%q: unbounded error %d bytes", s, len(err.Error()))
		}
	})
}

func TestPauseValue(t *testing.T) {
	for in, paused := range map[string]bool{"true": true, "yes": true, "": true, "pause": true, "false": false, " No ": false, "off": false, "0": false} {
		if got := pauseValue(in) != ""; got != paused {
			t.Errorf("pauseValue(%q) paused=%v, want %v", in, got, paused)
		}
	}
}

func FuzzPauseValue(f *testing.F) {
	for _, s := range []string{"", "true", "false", "FALSE", "0", "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		why := pauseValue(s)
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "false", "no", "off", "0":
			if why != "" {
				t.Fatalf("%q: paused", s)
			}
		default:
			if why == "" {
				t.Fatalf("%q: not paused", s)
			}
		}
	})
}

func TestRemediationLine(t *testing.T) {
	if got := remediationLine(RemediateReport{State: "on"}); got != "" {
		t.Errorf("nothing to say: %q", got)
	}
	rep := RemediateReport{State: "paused: by \"x\"", Stopped: []string{"2 of 3 workers unhealthy"},
		Unhealthy: map[string]string{"12": "Node w-12 Ready=Unknown for 6m0s", "3": "VM is POWEROFF"},
		InFlight:  map[string]string{"12": "poweroff sent", "20": "scale: the service is COOLDOWN"},
		Blocked:   map[string]string{"3": "resume held: x"}}
	got := remediationLine(rep)
	want := "paused: by 'x' | 2 of 3 workers unhealthy | VM 3 VM is POWEROFF (blocked: resume held: x) | VM 12 Node w-12 Ready=Unknown for 6m0s (poweroff sent) | VM 20 scale: the service is COOLDOWN"
	if got != want {
		t.Errorf("line:\n got %q\nwant %q", got, want)
	}
	long := RemediateReport{State: "on", Unhealthy: map[string]string{"1": strings.Repeat("y", 1000)}}
	if n := len(remediationLine(long)); n > 483 {
		t.Errorf("line of %d bytes: unbounded", n)
	}
}
