//go:build tools

// Package onekube pins the dependencies while the packages that use them are
// being written; go mod tidy keeps what this file imports. Removed once every
// dependency has a real importer.
package onekube

import (
	_ "github.com/OpenNebula/one/src/oca/go/src/goca"
	_ "github.com/cenkalti/backoff/v4"
	_ "github.com/coreos/go-systemd/v22/daemon"
	_ "github.com/coreos/go-systemd/v22/journal"
	_ "github.com/spf13/cobra"
	_ "k8s.io/cluster-bootstrap/token/util"
	_ "k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1"
	_ "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta3"
	_ "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"
	_ "sigs.k8s.io/yaml"
)
