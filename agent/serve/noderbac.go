package serve

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A node leaving the cluster (`onekubed leave`) drains itself with
// its own credential, kubelet.conf. The Node authorizer lets a node cordon
// itself and evict its own pods, but not delete its Node (kubernetes
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy NodeRules: nodes get
// create/get/list/watch/update/patch, no delete). This grant adds delete
// on nodes to the group system:nodes; the NodeRestriction admission
// plugin (admitNode, which handles Delete too) still confines each node to
// its own Node object, so a node can remove only itself. Measured on the
// real API server in agent/leave's tests.
const (
	NodeSelfRemovalRole = "onekube:node-self-removal"
	nodesGroup          = "system:nodes"
)

func nodeSelfRemoval() (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	meta := metav1.ObjectMeta{Name: NodeSelfRemovalRole, Labels: map[string]string{"app.kubernetes.io/managed-by": "onekube"}}
	role := &rbacv1.ClusterRole{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"delete"},
	}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: meta,
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: NodeSelfRemovalRole},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: nodesGroup}},
	}
	return role, binding
}

// EnsureNodeSelfRemoval creates or repairs the grant.
func EnsureNodeSelfRemoval(ctx context.Context, cs kubernetes.Interface) error {
	role, binding := nodeSelfRemoval()
	if err := ensureClusterRole(ctx, cs, role); err != nil {
		return err
	}
	return ensureClusterRoleBinding(ctx, cs, binding)
}
