package serve

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/upgrade"
)

// upgradePlanReader is the Role that lets every node read the upgrade
// plan, and nothing else: get on the one ConfigMap by name. Writing it
// stays with cluster-admin (the owner's CLI, the acting master), so a
// node can neither start nor steer an upgrade.
const upgradePlanReader = "onekube:upgrade-plan-reader"

// EnsureUpgradePlanRBAC creates or repairs the Role and its RoleBinding
// for group system:nodes.
func EnsureUpgradePlanRBAC(ctx context.Context, cs kubernetes.Interface) error {
	meta := metav1.ObjectMeta{Name: upgradePlanReader, Namespace: upgrade.PlanNamespace,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "onekube"}}
	role := &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"},
		ResourceNames: []string{upgrade.PlanName}, Verbs: []string{"get"},
	}}}
	if err := ensureRole(ctx, cs, role); err != nil {
		return err
	}
	return ensureRoleBinding(ctx, cs, &rbacv1.RoleBinding{ObjectMeta: meta,
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: upgradePlanReader},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:nodes"}},
	})
}
