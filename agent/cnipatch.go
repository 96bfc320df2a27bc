package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// The CNI manifests the image carries are upstream's (flannel's
// kube-flannel.yml, Calico's manifests/calico.yaml). Before applying one,
// the agent sets the pod network and pins the CNI to the interface of the
// node's own address, the NIC ONEAPP_K8S_ADDRESS picked (the kubelet's
// node-ip). Left alone, flannel takes the default route's interface and
// Calico the first interface it finds: on a VM with several NICs, not
// necessarily the one Kubernetes uses.
//
//   - flannel: --iface accepts an IP and picks the interface holding it
//     (flannel pkg/ipmatch LookupExtIface). The DaemonSet cannot carry a
//     per-node IP, so the node's address comes from the downward API
//     (status.hostIP, the node's InternalIP, i.e. its node-ip).
//     net-conf.json gets the pod network, IPv6 single-stack as flannel
//     spells it (EnableIPv4 false, EnableIPv6, IPv6Network;
//     pkg/subnet/config.go).
//   - Calico: IP_AUTODETECTION_METHOD=kubernetes-internal-ip takes the
//     node's InternalIP; CALICO_IPV4POOL_CIDR is the pod network.

// Names in the upstream manifests.
const (
	flannelConfigMap = "kube-flannel-cfg"
	flannelDaemonSet = "kube-flannel-ds"
	flannelContainer = "kube-flannel"
	calicoDaemonSet  = "calico-node"
	calicoContainer  = "calico-node"
	// nodeIPEnv is the variable the agent adds to flannel's container.
	nodeIPEnv = "ONEKUBE_NODE_IP"
)

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// patchManifest returns the manifest of cni, set up for pods and pinned to
// the node's interface. It fails when the manifest lacks the objects it
// must change: an unpinned CNI on a multi-NIC VM is a quiet wrong network.
func patchManifest(cni string, manifest []byte, pods netip.Prefix) ([]byte, error) {
	docs := docSeparator.Split(string(manifest), -1)
	var found []string
	for i, doc := range docs {
		obj, err := decodeDoc(doc)
		if err != nil {
			return nil, fmt.Errorf("%s manifest, document %d: %w", cni, i+1, err)
		}
		if obj == nil {
			continue
		}
		changed, what, err := patchObject(cni, obj, pods)
		if err != nil {
			return nil, fmt.Errorf("%s manifest: %w", cni, err)
		}
		if !changed {
			continue
		}
		found = append(found, what)
		out, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		docs[i] = "\n" + string(out)
	}
	want := []string{"DaemonSet/" + calicoDaemonSet}
	if cni == "flannel" {
		want = []string{"ConfigMap/" + flannelConfigMap, "DaemonSet/" + flannelDaemonSet}
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(found, " "), w) {
			return nil, fmt.Errorf("%s manifest has no %s to set the pod network and interface on", cni, w)
		}
	}
	return []byte(strings.Join(docs, "---")), nil
}

// decodeDoc reads one YAML document as a JSON object; nil for an empty one.
func decodeDoc(doc string) (map[string]any, error) {
	if strings.TrimSpace(stripComments(doc)) == "" {
		return nil, nil
	}
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(j, &obj); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	return obj, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// patchObject changes obj in place when it is one the agent sets up.
func patchObject(cni string, obj map[string]any, pods netip.Prefix) (bool, string, error) {
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	what := kind + "/" + name
	switch {
	case cni == "flannel" && kind == "ConfigMap" && name == flannelConfigMap:
		return true, what, patchFlannelNetConf(obj, pods)
	case cni == "flannel" && kind == "DaemonSet" && name == flannelDaemonSet:
		c, err := container(obj, flannelContainer)
		if err != nil {
			return false, what, err
		}
		var args []any
		for _, a := range asList(c["args"]) {
			if s, _ := a.(string); !strings.HasPrefix(s, "--iface") {
				args = append(args, a)
			}
		}
		c["args"] = append(args, "--iface=$("+nodeIPEnv+")")
		setEnv(c, map[string]any{"name": nodeIPEnv, "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "status.hostIP"}}})
		return true, what, nil
	case cni == "calico" && kind == "DaemonSet" && name == calicoDaemonSet:
		c, err := container(obj, calicoContainer)
		if err != nil {
			return false, what, err
		}
		setEnv(c, map[string]any{"name": "IP_AUTODETECTION_METHOD", "value": "kubernetes-internal-ip"})
		setEnv(c, map[string]any{"name": "CALICO_IPV4POOL_CIDR", "value": pods.String()})
		return true, what, nil
	}
	return false, what, nil
}

// patchFlannelNetConf sets the pod network in net-conf.json.
func patchFlannelNetConf(obj map[string]any, pods netip.Prefix) error {
	data, _ := obj["data"].(map[string]any)
	raw, _ := data["net-conf.json"].(string)
	if raw == "" {
		return fmt.Errorf("ConfigMap/%s has no net-conf.json", flannelConfigMap)
	}
	var conf map[string]any
	if err := json.Unmarshal([]byte(raw), &conf); err != nil {
		return fmt.Errorf("ConfigMap/%s net-conf.json: %w", flannelConfigMap, err)
	}
	if pods.Addr().Is6() {
		delete(conf, "Network")
		conf["EnableIPv4"], conf["EnableIPv6"], conf["IPv6Network"] = false, true, pods.String()
	} else {
		conf["Network"] = pods.String()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(conf); err != nil {
		return err
	}
	data["net-conf.json"] = b.String()
	return nil
}

// container finds a DaemonSet's container by name.
func container(ds map[string]any, name string) (map[string]any, error) {
	spec, _ := ds["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	for _, c := range asList(pod["containers"]) {
		if m, ok := c.(map[string]any); ok && m["name"] == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("DaemonSet has no container %q", name)
}

// setEnv sets one variable of a container, replacing one of that name.
func setEnv(c map[string]any, v map[string]any) {
	var env []any
	for _, e := range asList(c["env"]) {
		if m, ok := e.(map[string]any); !ok || m["name"] != v["name"] {
			env = append(env, e)
		}
	}
	c["env"] = append(env, v)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
