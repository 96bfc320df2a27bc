package autoscale

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Limits of ONEKUBE_WORKER_TEMPLATE: far above any worker VM, and small
// enough that a typo (a byte count for MB) is refused rather than obeyed.
const (
	maxWorkerVCPU     = 1024
	maxWorkerMemoryMB = 16 << 20 // 16 TiB
	maxTemplateLen    = 4096
	maxTemplateItems  = 64 // labels, and taints
)

// WorkerSize is the worker role's VM as flow rendered it into the masters'
// CONTEXT (ONEKUBE_WORKER_TEMPLATE): VCPU, MEMORY in MB, and the labels and
// taints every worker registers with beyond the kubelet's own.
type WorkerSize struct {
	VCPU, MemoryMB int
	Labels         map[string]string
	Taints         []corev1.Taint
}

// ParseWorkerSize reads ONEKUBE_WORKER_TEMPLATE: blank-separated fields
// "vcpu=N memory=MB [labels=k=v,...] [taints=k[=v]:Effect,...]", each at
// most once, vcpu and memory required, counts in canonical decimal. Empty
// (or blanks) means none: ok is false and err nil. Label keys and values
// are checked as the API server checks them, so a template never carries
// what no Node could.
func ParseWorkerSize(s string) (w WorkerSize, ok bool, err error) {
	if len(s) > maxTemplateLen {
		return WorkerSize{}, false, fmt.Errorf("worker template of %d bytes: at most %d", len(s), maxTemplateLen)
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return WorkerSize{}, false, nil
	}
	seen := map[string]bool{}
	for _, f := range fields {
		name, v, found := strings.Cut(f, "=")
		if !found {
			return WorkerSize{}, false, fmt.Errorf("worker template: field %s: want name=value", clip(f))
		}
		if seen[name] {
			return WorkerSize{}, false, fmt.Errorf("worker template: %s given twice", clip(name))
		}
		seen[name] = true
		switch name {
		case "vcpu":
			w.VCPU, err = sizeCount(v, 1, maxWorkerVCPU)
		case "memory":
			w.MemoryMB, err = sizeCount(v, 256, maxWorkerMemoryMB)
		case "labels":
			w.Labels, err = parseLabels(v)
		case "taints":
			w.Taints, err = parseTaints(v)
		default:
			err = fmt.Errorf("unknown field (want vcpu, memory, labels, taints)")
		}
		if err != nil {
			return WorkerSize{}, false, fmt.Errorf("worker template: %s: %w", clip(name), err)
		}
	}
	if !seen["vcpu"] || !seen["memory"] {
		return WorkerSize{}, false, fmt.Errorf("worker template %s: vcpu and memory are both required", clip(s))
	}
	return w, true, nil
}

// String is the canonical form ParseWorkerSize reads back.
func (w WorkerSize) String() string {
	s := fmt.Sprintf("vcpu=%d memory=%d", w.VCPU, w.MemoryMB)
	if len(w.Labels) > 0 {
		keys := slices.Sorted(maps.Keys(w.Labels))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+"="+w.Labels[k])
		}
		s += " labels=" + strings.Join(parts, ",")
	}
	if len(w.Taints) > 0 {
		parts := make([]string, 0, len(w.Taints))
		for _, t := range w.Taints {
			kv := t.Key
			if t.Value != "" {
				kv += "=" + t.Value
			}
			parts = append(parts, kv+":"+string(t.Effect))
		}
		s += " taints=" + strings.Join(parts, ",")
	}
	return s
}

// Template is the worker a VM of this size registers as: TemplateFromVM
// with the size's labels and taints added.
func (w WorkerSize) Template() (Template, error) {
	t, err := TemplateFromVM(w.VCPU, w.MemoryMB)
	if err != nil {
		return Template{}, err
	}
	maps.Copy(t.Labels, w.Labels)
	t.Taints = append(t.Taints, w.Taints...)
	return t, nil
}

func sizeCount(s string, lo, hi int) (int, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" || len(s) > 9 {
		return 0, fmt.Errorf("%s is not a canonical decimal count", clip(s))
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s is not within %d..%d", clip(s), lo, hi)
	}
	return n, nil
}

func parseLabels(s string) (map[string]string, error) {
	items := strings.Split(s, ",")
	if s == "" || len(items) > maxTemplateItems {
		return nil, fmt.Errorf("want 1 to %d k=v entries", maxTemplateItems)
	}
	out := map[string]string{}
	for _, it := range items {
		k, v, found := strings.Cut(it, "=")
		if !found {
			return nil, fmt.Errorf("label %s: want key=value", clip(it))
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("label key %s: %s", clip(k), errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("label %s value %s: %s", clip(k), clip(v), errs[0])
		}
		if k == corev1.LabelHostname || k == labelVMID {
			return nil, fmt.Errorf("label %s is each node's own", clip(k))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("label %s given twice", clip(k))
		}
		out[k] = v
	}
	return out, nil
}

func parseTaints(s string) ([]corev1.Taint, error) {
	items := strings.Split(s, ",")
	if s == "" || len(items) > maxTemplateItems {
		return nil, fmt.Errorf("want 1 to %d key[=value]:Effect entries", maxTemplateItems)
	}
	var out []corev1.Taint
	for _, it := range items {
		kv, effect, found := strings.Cut(it, ":")
		if !found {
			return nil, fmt.Errorf("taint %s: want key[=value]:Effect", clip(it))
		}
		t := corev1.Taint{Effect: corev1.TaintEffect(effect)}
		t.Key, t.Value, _ = strings.Cut(kv, "=")
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("taint %s: effect %s is none of NoSchedule, PreferNoSchedule, NoExecute", clip(it), clip(effect))
		}
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return nil, fmt.Errorf("taint key %s: %s", clip(t.Key), errs[0])
		}
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return nil, fmt.Errorf("taint %s value %s: %s", clip(t.Key), clip(t.Value), errs[0])
		}
		for _, o := range out {
			if o.Key == t.Key && o.Effect == t.Effect {
				return nil, fmt.Errorf("taint %s:%s given twice", clip(t.Key), t.Effect)
			}
		}
		out = append(out, t)
	}
	return out, nil
}
