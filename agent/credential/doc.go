// Package credential issues the kubeconfig credentials a master hands out
// (issue 13, docs/kubeconfig.md): a client certificate signed with the
// cluster CA for one user and role, and the ClusterRoleBinding that gives
// that user's role group its permissions. admin.conf and super-admin.conf
// are never read or copied here: each credential is new, short and bound
// to one user.
package credential
