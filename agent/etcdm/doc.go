// Package etcdm manages the membership of a kubeadm cluster's stacked etcd
// from a master: list the members with their health, and remove the member
// at a peer address only when the voting members left keep a healthy
// majority. It talks to etcd directly (go.etcd.io/etcd/client/v3, the
// release kubeadm 1.37 runs, 3.7), with the certificates kubeadm leaves on every
// control plane.
package etcdm
