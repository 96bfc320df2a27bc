package credential

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metaac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/context/kubeconfig"
)

// Names and labels of what Grant writes.
const (
	// ViewRole is the ClusterRole of the view role: Kubernetes' view
	// (everything labelled aggregate-to-view, so CRDs' view roles too)
	// plus read access to the cluster-scoped objects view leaves out.
	ViewRole = "onekube:view"
	// viewExtraRole holds those cluster-scoped reads.
	viewExtraRole = "onekube:view-cluster-scoped"
	// LabelKubeconfig marks every binding Grant writes, so
	// `kubectl get clusterrolebinding -l onekube.io/kubeconfig` lists them.
	LabelKubeconfig = "onekube.io/kubeconfig"
	// AnnotationUser names the user a binding is for (a label value
	// cannot hold an @).
	AnnotationUser = "onekube.io/user"
	labelAggregate = "onekube.io/aggregate-to-view"
	fieldManager   = "onekube-serve"
)

// clusterRole maps a kubeconfig role to the ClusterRole it binds.
func clusterRole(role string) (string, error) {
	switch role {
	case kubeconfig.RoleClusterAdmin:
		return "cluster-admin", nil
	case kubeconfig.RoleView:
		return ViewRole, nil
	}
	return "", kubeconfig.CheckRole(role)
}

// Grant makes the ClusterRoleBinding kubeconfig.Group(name, role) bind the
// group of the same name to the role's ClusterRole, creating the view
// ClusterRoles first when needed. It is idempotent (server-side apply), so
// every master may run it for the requests it answers. Deleting the
// binding takes the role away from every certificate of that user and
// role, and from nobody else.
func Grant(ctx context.Context, cs kubernetes.Interface, name, role string) error {
	cr, err := clusterRole(role)
	if err != nil {
		return err
	}
	if err := kubeconfig.CheckName(name); err != nil {
		return err
	}
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if role == kubeconfig.RoleView {
		if err := ensureViewRoles(ctx, cs, opts); err != nil {
			return err
		}
	}
	group := kubeconfig.Group(name, role)
	b := rbacac.ClusterRoleBinding(group).
		WithLabels(map[string]string{LabelKubeconfig: "true"}).
		WithAnnotations(map[string]string{AnnotationUser: name}).
		WithRoleRef(rbacac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(cr)).
		WithSubjects(rbacac.Subject().WithAPIGroup(rbacv1.GroupName).WithKind(rbacv1.GroupKind).WithName(group))
	if _, err := cs.RbacV1().ClusterRoleBindings().Apply(ctx, b, opts); err != nil {
		return fmt.Errorf("applying ClusterRoleBinding %s: %w", group, err)
	}
	return nil
}

func ensureViewRoles(ctx context.Context, cs kubernetes.Interface, opts metav1.ApplyOptions) error {
	read := []string{"get", "list", "watch"}
	extra := rbacac.ClusterRole(viewExtraRole).
		WithLabels(map[string]string{labelAggregate: "true", LabelKubeconfig: "true"}).
		WithRules(
			rbacac.PolicyRule().WithAPIGroups("").WithResources("nodes", "namespaces", "persistentvolumes").WithVerbs(read...),
			rbacac.PolicyRule().WithAPIGroups("storage.k8s.io").WithResources("storageclasses", "csidrivers", "csinodes").WithVerbs(read...),
			rbacac.PolicyRule().WithAPIGroups("scheduling.k8s.io").WithResources("priorityclasses").WithVerbs(read...),
			rbacac.PolicyRule().WithAPIGroups("networking.k8s.io").WithResources("ingressclasses").WithVerbs(read...),
		)
	if _, err := cs.RbacV1().ClusterRoles().Apply(ctx, extra, opts); err != nil {
		return fmt.Errorf("applying ClusterRole %s: %w", viewExtraRole, err)
	}
	// The aggregation controller (kube-controller-manager) fills the rules.
	view := rbacac.ClusterRole(ViewRole).
		WithLabels(map[string]string{LabelKubeconfig: "true"}).
		WithAggregationRule(rbacac.AggregationRule().WithClusterRoleSelectors(
			metaac.LabelSelector().WithMatchLabels(map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}),
			metaac.LabelSelector().WithMatchLabels(map[string]string{labelAggregate: "true"}),
		))
	if _, err := cs.RbacV1().ClusterRoles().Apply(ctx, view, opts); err != nil {
		return fmt.Errorf("applying ClusterRole %s: %w", ViewRole, err)
	}
	return nil
}
