// Package loopback runs a real etcd, kube-apiserver and (optionally)
// kube-controller-manager as plain processes on 127.0.0.1, for tests of
// code that talks to the Kubernetes API: the serve loops, token handling,
// node clean-up, kubeconfig issuing. It needs no root and starts in a few
// seconds; it has no kubelet and no kubeadm. Tests that need real kubeadm
// and one host per VM use the namespaced test bed instead.
//
// Binaries come from the test bed build (`make testbed`), found through
// $ONEKUBE_TESTBED_BIN or ~/.cache/onekube/testbed-<tag>/. Without them a
// test is skipped, except under CI=true, where that is a failure: a suite
// that silently skips its API tests proves nothing.
package loopback
