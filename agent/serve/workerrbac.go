package serve

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/onekube/onekube/agent/kubeadm"
)

// What a worker's join token may do. Worker tokens carry
// kubeadm.WorkerTokenGroup instead of kubeadm's default-node-token group,
// because kubeadm binds that group to the kubeadm-certs Secret and every
// VM of the service can read the worker token. The grant is
// kubeadm.WorkerJoinRBAC (why each rule: agent/kubeadm/workerrbac.go); the
// initializing master applies the same manifest before it publishes, so
// the first workers need not wait for serve.

// workerJoinObjects is kubeadm.WorkerJoinRBAC decoded.
type workerJoinObjects struct {
	clusterRoles        []*rbacv1.ClusterRole
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
	roles               []*rbacv1.Role
	roleBindings        []*rbacv1.RoleBinding
}

// decodeWorkerJoinRBAC reads the manifest strictly: an unknown field or
// kind is a build mistake, found by the tests before any cluster sees it.
func decodeWorkerJoinRBAC() (workerJoinObjects, error) {
	var objs workerJoinObjects
	for i, doc := range kubeadm.WorkerJoinRBACDocuments() {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return objs, fmt.Errorf("worker join RBAC, document %d: %w", i+1, err)
		}
		if tm.APIVersion != rbacv1.SchemeGroupVersion.String() {
			return objs, fmt.Errorf("worker join RBAC, document %d: apiVersion %q", i+1, tm.APIVersion)
		}
		var err error
		switch tm.Kind {
		case "ClusterRole":
			o := new(rbacv1.ClusterRole)
			err = yaml.UnmarshalStrict(doc, o)
			objs.clusterRoles = append(objs.clusterRoles, o)
		case "ClusterRoleBinding":
			o := new(rbacv1.ClusterRoleBinding)
			err = yaml.UnmarshalStrict(doc, o)
			objs.clusterRoleBindings = append(objs.clusterRoleBindings, o)
		case "Role":
			o := new(rbacv1.Role)
			err = yaml.UnmarshalStrict(doc, o)
			objs.roles = append(objs.roles, o)
		case "RoleBinding":
			o := new(rbacv1.RoleBinding)
			err = yaml.UnmarshalStrict(doc, o)
			objs.roleBindings = append(objs.roleBindings, o)
		default:
			err = fmt.Errorf("unexpected kind %q", tm.Kind)
		}
		if err != nil {
			return objs, fmt.Errorf("worker join RBAC, document %d: %w", i+1, err)
		}
	}
	return objs, nil
}

// EnsureWorkerJoinRBAC creates or repairs the worker group's grant.
func EnsureWorkerJoinRBAC(ctx context.Context, cs kubernetes.Interface) error {
	objs, err := decodeWorkerJoinRBAC()
	if err != nil {
		return err
	}
	for _, r := range objs.clusterRoles {
		if err := ensureClusterRole(ctx, cs, r); err != nil {
			return err
		}
	}
	for _, b := range objs.clusterRoleBindings {
		if err := ensureClusterRoleBinding(ctx, cs, b); err != nil {
			return err
		}
	}
	for _, r := range objs.roles {
		if err := ensureRole(ctx, cs, r); err != nil {
			return err
		}
	}
	for _, b := range objs.roleBindings {
		if err := ensureRoleBinding(ctx, cs, b); err != nil {
			return err
		}
	}
	// Clusters made before the CSR approver (csrapprove.go) carry the
	// worker group's blanket node-client auto-approval: gone.
	err = cs.RbacV1().ClusterRoleBindings().Delete(ctx, legacyWorkerAutoApprove, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting clusterrolebinding %s: %w", legacyWorkerAutoApprove, err)
	}
	return nil
}

// legacyWorkerAutoApprove bound the worker group to
// system:certificates.k8s.io:certificatesigningrequests:nodeclient.
const legacyWorkerAutoApprove = "onekube:worker-join-autoapprove"
