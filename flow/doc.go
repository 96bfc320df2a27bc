// Package flow turns a cluster spec into OneFlow service templates (OneFlow
// 6.x and 7.x shapes) and role VM templates, and validates service templates,
// ours or hand-written, against the OneFlow server's rules plus the checks it
// does not do but that break a kubeadm cluster.
//
// The package is pure: bytes and values in, bytes and values out. Talking to
// oned and OneFlow lives in flow/register; the CLI in cmd/onekube-flow.
// The server behaviour it follows is in shared/reference/oneflow.md.
package flow
