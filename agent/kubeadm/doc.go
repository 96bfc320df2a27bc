// Package kubeadm turns the agent's decisions into what kubeadm consumes and
// runs it: bootstrap tokens, the CA discovery hash, the init and join config
// files (rendered from kubeadm's own v1beta4 types; APIVersionFor refuses
// targets too old to read them), and a Runner for init, join, reset and version over the
// agent's Exec seam.
//
// Rendered configs hold the bootstrap token (kubeadm reads it from there), so
// callers write them with mode 0600 and pass the token to Runner as a secret
// to keep it out of errors. Tokens always expire: TokenTTL 0 is refused.
package kubeadm
