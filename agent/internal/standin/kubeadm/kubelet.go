package main

import "fmt"

// writeKubeletFiles writes what kubeadm's kubelet-start phase leaves in
// /var/lib/kubelet for the kubelet: its configuration, and kubeadm's flags
// with the node IP of kubeletExtraArgs. kubeadm reset empties the
// directory.
func writeKubeletFiles(root, nodeIP string) error {
	cfg := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" +
		"cgroupDriver: systemd\nstaticPodPath: /etc/kubernetes/manifests\n"
	if err := writeFile(root, kubeletConfig, []byte(cfg), 0o644); err != nil {
		return err
	}
	args := "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock"
	if nodeIP != "" {
		args += " --node-ip=" + nodeIP
	}
	return writeFile(root, kubeletFlagsFile, []byte(fmt.Sprintf("KUBELET_KUBEADM_ARGS=%q\n", args)), 0o644)
}
