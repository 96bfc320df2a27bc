package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/testbed/loopback"
)

// A worker's join token can do what kubeadm join needs (read the kubeadm
// and kubelet configs, look up its Node, file its node-client CSR) but
// gets 403 on kubeadm-certs, which kubeadm's upload-certs grants to its
// default-node-token group; a control-plane join token of that group
// still reads it. Against the real API server's RBAC.
func TestWorkerJoinGroupCannotReadKubeadmCerts(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	admin := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kubeadmUploads(t, admin)

	// Twice: the second run finds everything in place.
	for range 2 {
		if err := EnsureWorkerJoinRBAC(ctx, admin); err != nil {
			t.Fatal(err)
		}
	}
	worker, err := mintToken(ctx, admin, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	w := tokenClient(s, worker.Token.Reveal())

	for _, name := range []string{"kubeadm-config", "kubelet-config"} {
		if _, err := w.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("worker token reading ConfigMap %s: %v", name, err)
		}
	}
	if _, err := w.CoreV1().Nodes().Get(ctx, "worker-11", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("worker token getting a Node: %v, want NotFound", err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "node-csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    nodeCSR(t, "system:node:worker-11"),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	if _, err := w.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
		t.Errorf("worker token filing its CSR: %v", err)
	}
	_, err = w.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "kubeadm-certs", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("worker token reading kubeadm-certs: %v, want 403", err)
	}

	// The control-plane join token (controlplane.go's group) reads it:
	// the 403 above is the group's doing.
	cp := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.BootstrapTokenSecretPrefix + "cpjoin", Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey: "cpjoin", bootstrapapi.BootstrapTokenSecretKey: "0123456789abcdef",
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      kubeadm.KubeadmTokenGroup,
		},
	}
	if _, err := admin.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, cp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tokenClient(s, "cpjoin.0123456789abcdef").CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "kubeadm-certs", metav1.GetOptions{}); err != nil {
		t.Errorf("a kubeadm-group token reading kubeadm-certs: %v", err)
	}
}

func tokenClient(s *loopback.Server, token string) kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: s.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM}})
}

// kubeadmUploads creates what kubeadm init leaves for joins: the configs,
// and kubeadm-certs with its Role bound to kubeadm's token group
// (phases/copycerts/copycerts.go).
func kubeadmUploads(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	ns := metav1.NamespaceSystem
	for _, name := range []string{"kubeadm-config", "kubelet-config"} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-certs"},
		Data: map[string][]byte{"ca.key": []byte("sealed")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const name = "kubeadm:kubeadm-certs"
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"kubeadm-certs"},
	}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: kubeadm.KubeadmTokenGroup}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func nodeCSR(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
