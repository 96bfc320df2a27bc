package kubeadm

import (
	_ "embed"
	"regexp"
	"strings"
)

// WorkerJoinRBAC is the grant of WorkerTokenGroup, as a kubectl manifest:
// what kubeadm gives its own token group for a join, minus kubeadm-certs
// (the CA keys, encrypted with the certificate key:
// phases/copycerts/copycerts.go), which every VM of the service could
// otherwise read with the worker token:
//
//   - create and watch its CSR: system:node-bootstrapper, as kubeadm's
//     kubeadm:kubelet-bootstrap (phases/bootstraptoken/node/tlsbootstrap.go);
//   - not the node-client CSR auto-approval of kubeadm's
//     kubeadm:node-autoapprove-bootstrap (same file): with it any holder
//     of the token gets a node credential under any name; onekubed
//     serve's CSR approver (agent/serve/csrapprove.go) approves only the
//     names of VMs the cluster expects;
//   - get nodes, as kubeadm:get-nodes (same file: join checks that no
//     Ready Node has its name);
//   - read the kubeadm-config, kubelet-config and kube-proxy ConfigMaps, as
//     kubeadm:nodes-kubeadm-config (phases/uploadconfig/uploadconfig.go),
//     kubeadm:kubelet-config (phases/kubelet/config.go) and kube-proxy
//     (phases/addons/proxy/proxy.go).
//
// kube-public/cluster-info is anonymous already. Control-plane joins get a
// token of kubeadm's group: they need kubeadm-certs.
//
// One definition for both sides, so they cannot drift: the initializing
// master applies it with kubectl before it publishes kubeadm init's token
// (onekube-agent links no API client), and onekubed serve decodes it and
// creates or repairs the objects every minute.
//
//go:embed workerrbac.yaml
var WorkerJoinRBAC []byte

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// WorkerJoinRBACDocuments is WorkerJoinRBAC split into its YAML
// documents, one object each.
func WorkerJoinRBACDocuments() [][]byte {
	var docs [][]byte
	for _, d := range docSeparator.Split(string(WorkerJoinRBAC), -1) {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}
