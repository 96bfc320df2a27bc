package autoscale

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParseWorkerSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want *WorkerSize // nil: off (no error) when err is ""
		err  string
	}{
		{in: ""},
		{in: "   "},
		{in: "vcpu=2 memory=4096", want: &WorkerSize{VCPU: 2, MemoryMB: 4096}},
		{in: " memory=4096\tvcpu=2 ", want: &WorkerSize{VCPU: 2, MemoryMB: 4096}},
		{in: "vcpu=6 memory=6144 labels=pool=gpu,example.com/zone=a taints=dedicated=gpu:NoSchedule,spot:PreferNoSchedule",
			want: &WorkerSize{VCPU: 6, MemoryMB: 6144, Labels: map[string]string{"pool": "gpu", "example.com/zone": "a"},
				Taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}, {Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}}},
		{in: "vcpu=2", err: "both required"},
		{in: "memory=4096", err: "both required"},
		{in: "vcpu=2 memory=4096 vcpu=3", err: "twice"},
		{in: "vcpu=0 memory=4096", err: "within"},
		{in: "vcpu=02 memory=4096", err: "canonical"},
		{in: "vcpu=+2 memory=4096", err: "canonical"},
		{in: "vcpu=2 memory=100", err: "within"},
		{in: "vcpu=2 memory=4294967296", err: "canonical"},
		{in: "vcpu=2 memory=4096 disk=10", err: "unknown field"},
		{in: "vcpu=2 memory=4096 labels=", err: "k=v"},
		{in: "vcpu=2 memory=4096 labels=a", err: "key=value"},
		{in: "vcpu=2 memory=4096 labels=-a=b", err: "label key"},
		{in: "vcpu=2 memory=4096 labels=a=b,a=c", err: "twice"},
		{in: "vcpu=2 memory=4096 labels=kubernetes.io/hostname=x", err: "each node's own"},
		{in: "vcpu=2 memory=4096 taints=a:Sometimes", err: "effect"},
		{in: "vcpu=2 memory=4096 taints=a=b", err: "Effect"},
		{in: "vcpu=2 memory=4096 taints=a:NoSchedule,a:NoSchedule", err: "twice"},
		{in: "vcpu 2", err: "name=value"},
		{in: "vcpu=2 memory=4096 " + strings.Repeat("x", maxTemplateLen), err: "at most"},
	} {
		got, ok, err := ParseWorkerSize(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || ok {
				t.Errorf("ParseWorkerSize(%q) = %+v, %v, %v; want an error with %q", c.in, got, ok, err, c.err)
			}
		case c.want == nil:
			if err != nil || ok {
				t.Errorf("ParseWorkerSize(%q) = %v, %v; want off", c.in, ok, err)
			}
		case err != nil || !ok || !reflect.DeepEqual(got, *c.want):
			t.Errorf("ParseWorkerSize(%q) = %+v, %v, %v; want %+v", c.in, got, ok, err, *c.want)
		}
	}
}

// The template of a size with labels and taints carries them, besides the
// kubelet's own labels.
func TestWorkerSizeTemplate(t *testing.T) {
	t.Parallel()
	w, _, err := ParseWorkerSize("vcpu=2 memory=4096 labels=pool=gpu taints=dedicated=gpu:NoSchedule")
	if err != nil {
		t.Fatal(err)
	}
	tm, err := w.Template()
	if err != nil {
		t.Fatal(err)
	}
	if tm.Labels["pool"] != "gpu" || tm.Labels[corev1.LabelOSStable] != "linux" || len(tm.Taints) != 1 || tm.Taints[0].Key != "dedicated" {
		t.Errorf("template = %+v", tm)
	}
	if tm.Allocatable.Cpu().Value() != 2 {
		t.Errorf("cpu = %v", tm.Allocatable.Cpu())
	}
}

// FuzzParseWorkerSize: whatever the CONTEXT holds, the parser answers (no
// panic), accepts only sizes TemplateFromVM takes, keeps errors short, and
// reads back its own canonical form.
func FuzzParseWorkerSize(f *testing.F) {
	for _, s := range []string{"", "vcpu=2 memory=4096", "vcpu=2 memory=4096 labels=a=b taints=c=d:NoExecute",
		"vcpu=0 memory=1", "vcpu=2 memory=4096 labels=a=b,a=c", "labels==,=", "taints=:", "vcpu=1\x00 memory=256",
		"vcpu=2 memory=4096 taints=k:NoSchedule,k:NoExecute"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, ok, err := ParseWorkerSize(s)
		if err != nil {
			if ok {
				t.Fatalf("ParseWorkerSize(%q): error and ok", s)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("ParseWorkerSize(%q): error of %d bytes", s, len(err.Error()))
			}
			return
		}
		if !ok {
			if strings.TrimSpace(s) != "" {
				t.Fatalf("ParseWorkerSize(%q): off without an error", s)
			}
			return
		}
		if _, err := w.Template(); err != nil {
			t.Fatalf("ParseWorkerSize(%q) = %+v, which makes no template: %v", s, w, err)
		}
		again, ok2, err2 := ParseWorkerSize(w.String())
		if err2 != nil || !ok2 || !reflect.DeepEqual(again, w) {
			t.Fatalf("ParseWorkerSize(%q) = %+v does not read back from %q: %+v, %v", s, w, w.String(), again, err2)
		}
	})
}
