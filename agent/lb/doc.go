// Package lb is the local TCP load balancer every node runs in front of all
// masters' API servers when ONEAPP_K8S_CONTROL_PLANE_EP is empty
// (docs/architecture.md §3). The cluster's controlPlaneEndpoint is its
// listener, 127.0.0.1:6444, so kubelets, kubeadm and admin.conf reach
// whichever master answers, and losing one master loses nothing.
//
// It forwards bytes: TLS runs end to end between the client and an API
// server, whose certificate carries 127.0.0.1 (kubeadm adds the
// controlPlaneEndpoint host to its SANs, and onekube lists it in certSANs).
//
// Backends come from a file bootstrap seeds (Config, from OneGate's NIC
// data of the master VMs) and then from the API servers' own list, the
// default/kubernetes Endpoints (Follower), read through the balancer.
package lb
