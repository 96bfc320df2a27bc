// Package testbed runs real Kubernetes control planes in simulated VMs on
// one machine, for end-to-end tests that must be as strict as a cloud.
//
// Every VM is a host of its own: its own network namespace with its IP on
// the bed's bridge, its own hostname (UTS), its own disk (overlays on /etc,
// /var and /usr in a private mount namespace) and /run, and its own PID
// namespace whose init (vminit) takes every process of the VM down with it.
// Inside, the real kubeadm, etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler run unmodified; only the kubelet and the container
// runtime are played, by fakenode, with systemctl and `kubelet --version`
// stubs. The OneGate simulator is served at 169.254.16.9:5030 from the
// bed's switch, where real VMs find OneGate.
//
// The bed needs root (namespaces, mounts). Require skips a test without it,
// and fails it instead when CI=true. See docs/testbed.md.
package testbed
