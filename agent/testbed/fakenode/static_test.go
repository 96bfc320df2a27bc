package main

import (
	"strings"
	"testing"
)

const apiserverManifest = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    component: kube-apiserver
  name: kube-apiserver
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-apiserver
    - --advertise-address=192.0.2.2
    - --etcd-servers=https://127.0.0.1:2379
    image: registry.k8s.io/kube-apiserver:v1.36.3
    name: kube-apiserver
  hostNetwork: true
status: {}
`

func TestParseStaticPod(t *testing.T) {
	sp, err := parseStaticPod([]byte(apiserverManifest), "master-100")
	if err != nil {
		t.Fatal(err)
	}
	if sp.pod.Name != "kube-apiserver-master-100" || sp.pod.Namespace != "kube-system" || sp.pod.Spec.NodeName != "master-100" {
		t.Errorf("pod %s/%s on %q", sp.pod.Namespace, sp.pod.Name, sp.pod.Spec.NodeName)
	}
	if string(sp.pod.UID) != sp.hash || len(sp.hash) != 32 {
		t.Errorf("UID %q, hash %q", sp.pod.UID, sp.hash)
	}
	other, _ := parseStaticPod([]byte(strings.Replace(apiserverManifest, "192.0.2.2", "192.0.2.3", 1)), "master-100")
	if other.hash == sp.hash {
		t.Error("a changed manifest kept its hash (kubeadm upgrade waits for it to change)")
	}
	for name, bad := range map[string]string{
		"not yaml":      "{",
		"unknown field": strings.Replace(apiserverManifest, "hostNetwork", "hostNetwrk", 1),
		"not a pod":     "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n",
		"no containers": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n",
	} {
		if _, err := parseStaticPod([]byte(bad), "n"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParseStaticPod(f *testing.F) {
	f.Add([]byte(apiserverManifest))
	f.Add([]byte("kind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sp, err := parseStaticPod(data, "node")
		if err == nil && (sp.pod == nil || len(sp.pod.Spec.Containers) == 0 || !strings.HasSuffix(sp.pod.Name, "-node")) {
			t.Fatalf("accepted an unusable pod: %+v", sp.pod)
		}
	})
}
