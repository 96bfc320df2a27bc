package credential_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/onekube/onekube/agent/credential"
	"github.com/onekube/onekube/agent/testbed/loopback"
	"github.com/onekube/onekube/context/kubeconfig"
)

func loadCA(t *testing.T, s *loopback.Server) *credential.CA {
	t.Helper()
	certPEM, err := os.ReadFile(s.CACertPath())
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(s.CAKeyPath())
	if err != nil {
		t.Fatal(err)
	}
	ca, err := credential.ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// issue grants name the role and returns a client using a fresh
// certificate valid for ttl.
func issue(t *testing.T, s *loopback.Server, ca *credential.CA, name, role string, ttl time.Duration) (kubernetes.Interface, credential.Issued) {
	t.Helper()
	ctx := context.Background()
	if err := credential.Grant(ctx, s.Client(t), name, role); err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue(name, kubeconfig.Group(name, role), ttl, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: ca.CertPEM, CertData: c.CertPEM, KeyData: []byte(c.Key.Reveal())}})
	if err != nil {
		t.Fatal(err)
	}
	return cs, c
}

// eventually retries f until it returns nil or the minute is over: RBAC
// and the aggregation controller act through informers.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func wantStatus(check func(error) bool, name string) func(error) error {
	return func(err error) error {
		if check(err) {
			return nil
		}
		return &unexpected{want: name, got: err}
	}
}

type unexpected struct {
	want string
	got  error
}

func (u *unexpected) Error() string {
	if u.got == nil {
		return "succeeded, want " + u.want
	}
	return "got " + u.got.Error() + ", want " + u.want
}

// The credentials a master issues work against the real API server as
// their role says, one binding revokes one user's role and nobody else's,
// and a certificate stops working when its validity ends.
func TestIssuedCredentialsOnARealAPIServer(t *testing.T) {
	s := loopback.Start(t, loopback.Options{ControllerManager: true})
	admin := s.Client(t)
	ca := loadCA(t, s)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-42", Labels: map[string]string{"onekube.io/vm-id": "42"}}}
	if _, err := admin.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	listNodes := func(cs kubernetes.Interface) error {
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil && (len(l.Items) != 1 || l.Items[0].Name != "worker-42") {
			return &unexpected{want: "worker-42"}
		}
		return err
	}
	writeCM := func(cs kubernetes.Interface, name string) error {
		_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	}

	alice, _ := issue(t, s, ca, "alice", kubeconfig.RoleClusterAdmin, time.Hour)
	eventually(t, "cluster-admin lists nodes", func() error { return listNodes(alice) })
	if err := writeCM(alice, "by-alice"); err != nil {
		t.Fatalf("cluster-admin cannot write: %v", err)
	}

	bob, _ := issue(t, s, ca, "bob", kubeconfig.RoleView, time.Hour)
	eventually(t, "view lists nodes (aggregated onekube:view)", func() error { return listNodes(bob) })
	if err := writeCM(bob, "by-bob"); !apierrors.IsForbidden(err) {
		t.Fatalf("view wrote a ConfigMap: err %v, want Forbidden", err)
	}
	if _, err := bob.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("view listed Secrets: err %v, want Forbidden", err)
	}
	// Bob's admin binding does not reach his view certificate: the groups
	// differ per role.
	if err := credential.Grant(ctx, admin, "bob", kubeconfig.RoleClusterAdmin); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := writeCM(bob, "by-bob-2"); !apierrors.IsForbidden(err) {
		t.Fatalf("a view certificate gained its user's admin binding: err %v", err)
	}

	// Revoking alice: delete her binding. Her certificate stays valid,
	// but has no permission left; bob is untouched.
	if err := admin.RbacV1().ClusterRoleBindings().Delete(ctx, kubeconfig.Group("alice", kubeconfig.RoleClusterAdmin), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "revoked alice", func() error { return wantStatus(apierrors.IsForbidden, "Forbidden")(listNodes(alice)) })
	if err := listNodes(bob); err != nil {
		t.Fatalf("revoking alice touched bob: %v", err)
	}

	// Validity: a certificate of a few seconds works, then is refused.
	carol, c := issue(t, s, ca, "carol", kubeconfig.RoleClusterAdmin, 4*time.Second)
	eventually(t, "short certificate works", func() error { return listNodes(carol) })
	time.Sleep(time.Until(c.NotAfter) + 1500*time.Millisecond)
	if err := listNodes(carol); !apierrors.IsUnauthorized(err) {
		t.Fatalf("after its validity: err %v, want Unauthorized", err)
	}
}
