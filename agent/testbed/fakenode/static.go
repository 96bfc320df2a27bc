package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// staticPod is one manifest of the static pod directory, as the kubelet
// sees it: renamed <name>-<node> and given a UID from its content, so a
// changed manifest is a new pod (kubeadm upgrade waits for that hash to
// change on the mirror pod).
type staticPod struct {
	pod  *corev1.Pod
	hash string
	file string
}

// readStaticPods parses every *.yaml/*.yml/*.json file of dir (kubelet
// skips dotfiles). A broken manifest is reported and skipped, as the
// kubelet logs and ignores it.
func readStaticPods(dir, nodeName string, logf func(string, ...any)) map[string]staticPod {
	out := map[string]staticPod{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		if ext := filepath.Ext(name); ext != ".yaml" && ext != ".yml" && ext != ".json" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			logf("static pod %s: %v", name, err)
			continue
		}
		sp, err := parseStaticPod(data, nodeName)
		if err != nil {
			logf("static pod %s: %v", name, err)
			continue
		}
		sp.file = name
		out[sp.pod.Namespace+"/"+sp.pod.Name] = sp
	}
	return out
}

// parseStaticPod decodes a manifest strictly enough to run it.
func parseStaticPod(data []byte, nodeName string) (staticPod, error) {
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(data, &pod); err != nil {
		return staticPod{}, fmt.Errorf("decoding: %w", err)
	}
	if pod.Kind != "Pod" || pod.Name == "" {
		return staticPod{}, fmt.Errorf("not a named Pod (kind %q, name %q)", pod.Kind, pod.Name)
	}
	if len(pod.Spec.Containers) == 0 {
		return staticPod{}, fmt.Errorf("pod %s has no containers", pod.Name)
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	sum := sha256.Sum256(append(append([]byte{}, data...), nodeName...))
	hash := hex.EncodeToString(sum[:16])
	pod.Name = pod.Name + "-" + nodeName
	pod.UID = types.UID(hash)
	pod.Spec.NodeName = nodeName
	return staticPod{pod: &pod, hash: hash}, nil
}

// syncStatic makes the runtime run exactly the static pods of dir: new
// ones started, changed ones replaced, removed ones stopped, crashed
// containers restarted after a back-off.
func (k *kubelet) syncStatic() {
	want := readStaticPods(k.staticDir, k.nodeName, k.logf)
	keys := make([]string, 0, len(want))
	for key := range want {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		sp := want[key]
		sb := k.rt.find(sp.pod.Namespace, sp.pod.Name)
		switch {
		case sb == nil:
			k.logf("starting static pod %s (%s, hash %s)", key, sp.file, sp.hash[:8])
			if _, err := k.rt.runPod(sp.pod, sp.hash); err != nil {
				k.logf("static pod %s: %v", key, err)
			}
		case sb.hash != sp.hash:
			k.logf("static pod %s changed (%s -> %s): replacing", key, sb.hash[:8], sp.hash[:8])
			k.rt.stop(sb, 10*time.Second)
			k.rt.remove(sb.id)
			if _, err := k.rt.runPod(sp.pod, sp.hash); err != nil {
				k.logf("static pod %s: %v", key, err)
			}
		default:
			for _, err := range k.rt.restartExited(sb, 2*time.Second) {
				k.logf("static pod %s: %v", key, err)
			}
		}
	}
	for _, sb := range k.rt.list() {
		if _, ok := want[sb.pod.Namespace+"/"+sb.pod.Name]; !ok && sb.ready {
			k.logf("static pod %s/%s removed: stopping", sb.pod.Namespace, sb.pod.Name)
			k.rt.stop(sb, 10*time.Second)
			k.rt.remove(sb.id)
		}
	}
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
