package serve

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// ensureRBAC creates what is missing, repairs what drifted with the
// fewest writes (a roleRef, immutable, by replacing the binding), and
// writes nothing when the grant is already right.
func TestEnsureRBAC(t *testing.T) {
	ns := "kube-system"
	role := func(verbs ...string) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}}}
	}
	binding := func(roleName, group string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roleName},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group}}}
	}
	for _, tc := range []struct {
		name     string
		existing []*rbacv1.Role
		bindings []*rbacv1.RoleBinding
		wantVerb []string // write verbs, in order
	}{
		{"absent: created", nil, nil, []string{"create", "create"}},
		{"right: untouched", []*rbacv1.Role{role("get")}, []*rbacv1.RoleBinding{binding("r", "g")}, nil},
		{"rules drifted: repaired", []*rbacv1.Role{role("get", "delete")}, []*rbacv1.RoleBinding{binding("r", "g")}, []string{"update"}},
		{"subjects drifted: repaired", []*rbacv1.Role{role("get")}, []*rbacv1.RoleBinding{binding("r", "intruders")}, []string{"update"}},
		{"roleRef drifted: replaced", []*rbacv1.Role{role("get")}, []*rbacv1.RoleBinding{binding("other", "g")}, []string{"delete", "create"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, r := range tc.existing {
				_, _ = cs.RbacV1().Roles(ns).Create(context.Background(), r, metav1.CreateOptions{})
			}
			for _, b := range tc.bindings {
				_, _ = cs.RbacV1().RoleBindings(ns).Create(context.Background(), b, metav1.CreateOptions{})
			}
			cs.ClearActions()
			ctx := context.Background()
			if err := ensureRole(ctx, cs, role("get")); err != nil {
				t.Fatal(err)
			}
			if err := ensureRoleBinding(ctx, cs, binding("r", "g")); err != nil {
				t.Fatal(err)
			}
			var writes []string
			for _, a := range cs.Actions() {
				if a.GetVerb() != "get" {
					writes = append(writes, a.GetVerb())
				}
			}
			if len(writes) != len(tc.wantVerb) {
				t.Fatalf("writes %v, want %v", writes, tc.wantVerb)
			}
			for i := range writes {
				if writes[i] != tc.wantVerb[i] {
					t.Fatalf("writes %v, want %v", writes, tc.wantVerb)
				}
			}
			got, _ := cs.RbacV1().RoleBindings(ns).Get(ctx, "b", metav1.GetOptions{})
			if got.RoleRef.Name != "r" || got.Subjects[0].Name != "g" {
				t.Errorf("binding after: %+v %+v", got.RoleRef, got.Subjects)
			}
			r, _ := cs.RbacV1().Roles(ns).Get(ctx, "r", metav1.GetOptions{})
			if len(r.Rules[0].Verbs) != 1 || r.Rules[0].Verbs[0] != "get" {
				t.Errorf("role after: %+v", r.Rules)
			}
		})
	}
}
