package main

import (
	"fmt"

	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/leave"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// finishedState is the agent's state file once bootstrap has finished on
// this VM; done is false before, when serve, leave and upgrade-node have
// nothing to work on yet.
func finishedState(root system.Root) (st *state.State, done bool, err error) {
	store := state.Store{Root: root}
	if done, err := store.Finished(); err != nil || !done {
		return nil, false, err
	}
	st, err = store.Load()
	return st, err == nil, err
}

// publishedNodeName is the node name bootstrap registered and published.
func publishedNodeName(st *state.State) (string, error) {
	node := st.Published[vmcontext.KeyPubNodeName]
	if node == "" {
		return "", fmt.Errorf("the state file names no node (%s)", vmcontext.KeyPubNodeName)
	}
	return node, nil
}

// nodeClient is a Kubernetes client on the kubeconfig at path under root
// (the kubelet's own credential for leave and upgrade-node).
func nodeClient(root system.Root, path string) (kubernetes.Interface, error) {
	rc, err := leave.LoadKubeconfig(root, path)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(rc)
}
