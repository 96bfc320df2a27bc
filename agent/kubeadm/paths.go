package kubeadm

// Files on a node, relative to its root: kubeadm's own (kubeadm
// constants.go: KubernetesDir, the kubeconfig names, the pki dir) and the
// agent's rendered configs. Both the bootstrap and onekubed read them.
const (
	InitConfigFile  = "/var/lib/onekube/kubeadm-init.yaml"
	JoinConfigFile  = "/var/lib/onekube/kubeadm-join.yaml"
	AdminConfFile   = "/etc/kubernetes/admin.conf"
	KubeletConfFile = "/etc/kubernetes/kubelet.conf"
	CACertFile      = "/etc/kubernetes/pki/ca.crt"
	// APIServerManifest is the static pod of a control plane kubeadm set up.
	APIServerManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"
)
