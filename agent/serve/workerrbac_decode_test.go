package serve

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/onekube/onekube/agent/kubeadm"
)

// What serve creates is exactly the manifest the initializing master
// applies, decoded: the grant spelled out here, object by object (the
// rules serve built in Go before the manifest was shared).
func TestWorkerJoinRBACDecoded(t *testing.T) {
	got, err := decodeWorkerJoinRBAC()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app.kubernetes.io/managed-by": "onekube"}
	meta := func(name, ns string, kind string) (metav1.TypeMeta, metav1.ObjectMeta) {
		return metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: kind},
			metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	group := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: kubeadm.WorkerTokenGroup}}
	clusterRole := func(name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	}
	crb := func(name, role string) *rbacv1.ClusterRoleBinding {
		tm, om := meta(name, "", "ClusterRoleBinding")
		return &rbacv1.ClusterRoleBinding{TypeMeta: tm, ObjectMeta: om, RoleRef: clusterRole(role), Subjects: group}
	}
	tm, om := meta("onekube:worker-join-get-nodes", "", "ClusterRole")
	getNodes := &rbacv1.ClusterRole{TypeMeta: tm, ObjectMeta: om, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"},
	}}}
	tm, om = meta("onekube:worker-join-config", metav1.NamespaceSystem, "Role")
	role := &rbacv1.Role{TypeMeta: tm, ObjectMeta: om, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
		ResourceNames: []string{"kubeadm-config", "kubelet-config", "kube-proxy"},
	}}}
	tm, om = meta("onekube:worker-join-config", metav1.NamespaceSystem, "RoleBinding")
	rb := &rbacv1.RoleBinding{TypeMeta: tm, ObjectMeta: om,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}, Subjects: group}
	want := workerJoinObjects{
		clusterRoles: []*rbacv1.ClusterRole{getNodes},
		clusterRoleBindings: []*rbacv1.ClusterRoleBinding{
			crb("onekube:worker-join-bootstrap", "system:node-bootstrapper"),
			crb("onekube:worker-join-get-nodes", getNodes.Name),
		},
		roles:        []*rbacv1.Role{role},
		roleBindings: []*rbacv1.RoleBinding{rb},
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"clusterroles", got.clusterRoles, want.clusterRoles},
		{"clusterrolebindings", got.clusterRoleBindings, want.clusterRoleBindings},
		{"roles", got.roles, want.roles},
		{"rolebindings", got.roleBindings, want.roleBindings},
	} {
		if !equality.Semantic.DeepEqual(c.got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.what, c.got, c.want)
		}
	}
}
