package serve

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/kubeadm"
)

// What a worker's join token may do. Worker tokens carry
// kubeadm.WorkerTokenGroup instead of kubeadm's default-node-token group,
// because kubeadm binds that group to the kubeadm-certs Secret (the CA
// keys, encrypted with the certificate key: phases/copycerts/copycerts.go)
// and every VM of the service can read the worker token. The grants below
// are what kubeadm gives its own group for a join, minus kubeadm-certs:
//
//   - create and watch its CSR: system:node-bootstrapper, as kubeadm's
//     kubeadm:kubelet-bootstrap (phases/bootstraptoken/node/tlsbootstrap.go);
//   - the node-client CSR auto-approval, as kubeadm's
//     kubeadm:node-autoapprove-bootstrap (same file);
//   - get nodes, as kubeadm:get-nodes (same file: join checks that no
//     Ready Node has its name);
//   - read the kubeadm-config, kubelet-config and kube-proxy ConfigMaps, as
//     kubeadm:nodes-kubeadm-config (phases/uploadconfig/uploadconfig.go),
//     kubeadm:kubelet-config (phases/kubelet/config.go) and kube-proxy
//     (phases/addons/proxy/proxy.go).
//
// kube-public/cluster-info is anonymous already. Control-plane joins get a
// token of kubeadm's group (controlplane.go): they need kubeadm-certs.
const (
	workerJoinName = "onekube:worker-join"
	// Built-in ClusterRoles (kubernetes plugin/pkg/auth/authorizer/rbac/
	// bootstrappolicy).
	nodeBootstrapperRole = "system:node-bootstrapper"
	nodeClientApprove    = "system:certificates.k8s.io:certificatesigningrequests:nodeclient"
)

var managedBy = map[string]string{"app.kubernetes.io/managed-by": "onekube"}

func workerGroup() []rbacv1.Subject {
	return []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: kubeadm.WorkerTokenGroup}}
}

func clusterRoleRef(name string) rbacv1.RoleRef {
	return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
}

func meta(name, ns string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: managedBy}
}

// workerJoinRBAC is the whole grant.
func workerJoinRBAC() ([]*rbacv1.ClusterRole, []*rbacv1.ClusterRoleBinding, *rbacv1.Role, *rbacv1.RoleBinding) {
	getNodes := &rbacv1.ClusterRole{ObjectMeta: meta(workerJoinName+"-get-nodes", ""), Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"},
	}}}
	bindings := []*rbacv1.ClusterRoleBinding{
		{ObjectMeta: meta(workerJoinName+"-bootstrap", ""), RoleRef: clusterRoleRef(nodeBootstrapperRole), Subjects: workerGroup()},
		{ObjectMeta: meta(workerJoinName+"-autoapprove", ""), RoleRef: clusterRoleRef(nodeClientApprove), Subjects: workerGroup()},
		{ObjectMeta: meta(getNodes.Name, ""), RoleRef: clusterRoleRef(getNodes.Name), Subjects: workerGroup()},
	}
	role := &rbacv1.Role{ObjectMeta: meta(workerJoinName+"-config", metav1.NamespaceSystem), Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
		ResourceNames: []string{"kubeadm-config", "kubelet-config", "kube-proxy"},
	}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: meta(role.Name, metav1.NamespaceSystem),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}, Subjects: workerGroup()}
	return []*rbacv1.ClusterRole{getNodes}, bindings, role, rb
}

// EnsureWorkerJoinRBAC creates or repairs the worker group's grant.
func EnsureWorkerJoinRBAC(ctx context.Context, cs kubernetes.Interface) error {
	roles, bindings, role, rb := workerJoinRBAC()
	for _, r := range roles {
		if err := ensureClusterRole(ctx, cs, r); err != nil {
			return err
		}
	}
	for _, b := range bindings {
		if err := ensureClusterRoleBinding(ctx, cs, b); err != nil {
			return err
		}
	}
	rs := cs.RbacV1().Roles(role.Namespace)
	switch got, err := rs.Get(ctx, role.Name, metav1.GetOptions{}); {
	case apierrors.IsNotFound(err):
		if _, err := rs.Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating role %s: %w", role.Name, err)
		}
	case err != nil:
		return fmt.Errorf("reading role %s: %w", role.Name, err)
	case !equality.Semantic.DeepEqual(got.Rules, role.Rules):
		got.Rules = role.Rules
		if _, err := rs.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("repairing role %s: %w", role.Name, err)
		}
	}
	rbs := cs.RbacV1().RoleBindings(rb.Namespace)
	switch got, err := rbs.Get(ctx, rb.Name, metav1.GetOptions{}); {
	case apierrors.IsNotFound(err):
		if _, err := rbs.Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating rolebinding %s: %w", rb.Name, err)
		}
	case err != nil:
		return fmt.Errorf("reading rolebinding %s: %w", rb.Name, err)
	case got.RoleRef != rb.RoleRef:
		// roleRef is immutable: replace the binding.
		if err := rbs.Delete(ctx, rb.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("replacing rolebinding %s: %w", rb.Name, err)
		}
		if _, err := rbs.Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("replacing rolebinding %s: %w", rb.Name, err)
		}
	case !equality.Semantic.DeepEqual(got.Subjects, rb.Subjects):
		got.Subjects = rb.Subjects
		if _, err := rbs.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("repairing rolebinding %s: %w", rb.Name, err)
		}
	}
	return nil
}
