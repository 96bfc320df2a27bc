package serve

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// ensureClusterRole creates role, or repairs its rules.
func ensureClusterRole(ctx context.Context, cs kubernetes.Interface, role *rbacv1.ClusterRole) error {
	roles := cs.RbacV1().ClusterRoles()
	switch got, err := roles.Get(ctx, role.Name, metav1.GetOptions{}); {
	case apierrors.IsNotFound(err):
		if _, err := roles.Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating clusterrole %s: %w", role.Name, err)
		}
	case err != nil:
		return fmt.Errorf("reading clusterrole %s: %w", role.Name, err)
	case !equality.Semantic.DeepEqual(got.Rules, role.Rules):
		got.Rules = role.Rules
		if _, err := roles.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("repairing clusterrole %s: %w", role.Name, err)
		}
	}
	return nil
}

// ensureClusterRoleBinding creates binding, or repairs its role and
// subjects.
func ensureClusterRoleBinding(ctx context.Context, cs kubernetes.Interface, binding *rbacv1.ClusterRoleBinding) error {
	bindings := cs.RbacV1().ClusterRoleBindings()
	switch got, err := bindings.Get(ctx, binding.Name, metav1.GetOptions{}); {
	case apierrors.IsNotFound(err):
		if _, err := bindings.Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating clusterrolebinding %s: %w", binding.Name, err)
		}
	case err != nil:
		return fmt.Errorf("reading clusterrolebinding %s: %w", binding.Name, err)
	case got.RoleRef != binding.RoleRef:
		// roleRef is immutable: replace the binding.
		if err := bindings.Delete(ctx, binding.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("replacing clusterrolebinding %s: %w", binding.Name, err)
		}
		if _, err := bindings.Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("replacing clusterrolebinding %s: %w", binding.Name, err)
		}
	case !equality.Semantic.DeepEqual(got.Subjects, binding.Subjects):
		got.Subjects = binding.Subjects
		if _, err := bindings.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("repairing clusterrolebinding %s: %w", binding.Name, err)
		}
	}
	return nil
}
