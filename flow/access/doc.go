// Package access is the requester's side of `onekube-flow kubeconfig`
// (docs/kubeconfig.md): the user's age key, the request written into a
// master's USER_TEMPLATE through oned, the answer read back, opened and
// checked against the request and, live, against the API server, and the
// kubeconfig file it ends in. The master side is agent/serve/kubeconfig.go;
// the contract between them is context/kubeconfig.
package access
