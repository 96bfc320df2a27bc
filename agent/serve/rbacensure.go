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

// rbacClient is what client-go's typed RBAC clients have in common.
type rbacClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// rbacObject says how one kind is compared and repaired: same reports
// whether got already grants what want does; repair copies want's grant
// into got; replace is set when the difference lies in an immutable
// field (a binding's roleRef), which takes a delete and a create.
type rbacObject[T any] struct {
	kind    string
	same    func(got, want T) bool
	repair  func(got, want T)
	replace func(got, want T) bool
}

// ensureRBAC creates want, or repairs the object of its name so that it
// grants exactly what want grants, and nothing else of it is touched.
func ensureRBAC[T any](ctx context.Context, c rbacClient[T], o rbacObject[T], name string, want T) error {
	got, err := c.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := c.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", o.kind, name, err)
		}
	case err != nil:
		return fmt.Errorf("reading %s %s: %w", o.kind, name, err)
	case o.replace != nil && o.replace(got, want):
		if err := c.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("replacing %s %s: %w", o.kind, name, err)
		}
		if _, err := c.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("replacing %s %s: %w", o.kind, name, err)
		}
	case !o.same(got, want):
		o.repair(got, want)
		if _, err := c.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("repairing %s %s: %w", o.kind, name, err)
		}
	}
	return nil
}

// ensureClusterRole creates role, or repairs its rules.
func ensureClusterRole(ctx context.Context, cs kubernetes.Interface, role *rbacv1.ClusterRole) error {
	return ensureRBAC(ctx, cs.RbacV1().ClusterRoles(), rbacObject[*rbacv1.ClusterRole]{kind: "clusterrole",
		same:   func(got, want *rbacv1.ClusterRole) bool { return equality.Semantic.DeepEqual(got.Rules, want.Rules) },
		repair: func(got, want *rbacv1.ClusterRole) { got.Rules = want.Rules },
	}, role.Name, role)
}

// ensureRole creates role, or repairs its rules.
func ensureRole(ctx context.Context, cs kubernetes.Interface, role *rbacv1.Role) error {
	return ensureRBAC(ctx, cs.RbacV1().Roles(role.Namespace), rbacObject[*rbacv1.Role]{kind: "role",
		same:   func(got, want *rbacv1.Role) bool { return equality.Semantic.DeepEqual(got.Rules, want.Rules) },
		repair: func(got, want *rbacv1.Role) { got.Rules = want.Rules },
	}, role.Name, role)
}

// ensureClusterRoleBinding creates binding, or repairs its role (roleRef is
// immutable: the binding is replaced) and subjects.
func ensureClusterRoleBinding(ctx context.Context, cs kubernetes.Interface, binding *rbacv1.ClusterRoleBinding) error {
	return ensureRBAC(ctx, cs.RbacV1().ClusterRoleBindings(), rbacObject[*rbacv1.ClusterRoleBinding]{kind: "clusterrolebinding",
		replace: func(got, want *rbacv1.ClusterRoleBinding) bool { return got.RoleRef != want.RoleRef },
		same: func(got, want *rbacv1.ClusterRoleBinding) bool {
			return equality.Semantic.DeepEqual(got.Subjects, want.Subjects)
		},
		repair: func(got, want *rbacv1.ClusterRoleBinding) { got.Subjects = want.Subjects },
	}, binding.Name, binding)
}

// ensureRoleBinding creates rb, or repairs its role (by replacing it) and
// subjects.
func ensureRoleBinding(ctx context.Context, cs kubernetes.Interface, rb *rbacv1.RoleBinding) error {
	return ensureRBAC(ctx, cs.RbacV1().RoleBindings(rb.Namespace), rbacObject[*rbacv1.RoleBinding]{kind: "rolebinding",
		replace: func(got, want *rbacv1.RoleBinding) bool { return got.RoleRef != want.RoleRef },
		same: func(got, want *rbacv1.RoleBinding) bool {
			return equality.Semantic.DeepEqual(got.Subjects, want.Subjects)
		},
		repair: func(got, want *rbacv1.RoleBinding) { got.Subjects = want.Subjects },
	}, rb.Name, rb)
}
