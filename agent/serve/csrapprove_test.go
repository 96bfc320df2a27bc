package serve

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/agent/testbed/loopback"
	"github.com/onekube/onekube/context/onegate"
)

func TestJudgeCSR(t *testing.T) {
	now := time.Now()
	f := csrFacts{tokens: map[string]bool{"abcdef": true}, expected: map[string]int{"worker-11": 11}, now: now, grace: time.Minute}
	csr := func(user, cn string, age time.Duration, mod func(*certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
		c := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "node-csr-x", CreationTimestamp: metav1.NewTime(now.Add(-age))},
			Spec: certificatesv1.CertificateSigningRequestSpec{Username: user, Groups: []string{"system:bootstrappers", kubeadm.WorkerTokenGroup},
				Request: nodeCSR(t, cn), SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
		}
		if mod != nil {
			mod(c)
		}
		return c
	}
	for _, c := range []struct {
		name string
		csr  *certificatesv1.CertificateSigningRequest
		want csrVerdict
		why  string
	}{
		{"the expected VM's name", csr("system:bootstrap:abcdef", "system:node:worker-11", 0, nil), csrApprove, "VM 11"},
		{"another name, fresh", csr("system:bootstrap:abcdef", "system:node:master-10", time.Second, nil), csrWait, ""},
		{"another name, past the grace", csr("system:bootstrap:abcdef", "system:node:master-10", 2*time.Minute, nil), csrDeny, "no VM the cluster expects"},
		{"an unknown token", csr("system:bootstrap:zzzzzz", "system:node:worker-11", 0, nil), csrDeny, "no live join token"},
		{"not a bootstrap token", csr("system:node:worker-11", "system:node:worker-11", 0, nil), csrDeny, "no live join token"},
		{"another signer", csr("system:bootstrap:abcdef", "system:node:worker-11", 0, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.SignerName = certificatesv1.KubeletServingSignerName
		}), csrDeny, "signer"},
		{"a server usage", csr("system:bootstrap:abcdef", "system:node:worker-11", 0, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = append(c.Spec.Usages, certificatesv1.UsageServerAuth)
		}), csrDeny, "usage"},
		{"not a node", csr("system:bootstrap:abcdef", "admin", 0, nil), csrDeny, "common name"},
		{"garbage", csr("system:bootstrap:abcdef", "x", 0, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = []byte("not pem")
		}), csrDeny, "PEM"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, why := judgeCSR(c.csr, f)
			// A token ID is part of a token: the reason, which serve
			// logs, never carries one.
			if got != c.want || !strings.Contains(why, c.why) || strings.Contains(why, "zzzzzz") || strings.Contains(why, "abcdef") {
				t.Errorf("judgeCSR = %v %q, want %v (%q)", got, why, c.want, c.why)
			}
		})
	}
}

// The approver against the real API server's CSR and RBAC: the worker
// group may no longer have its CSRs auto-approved (a clusterrolebinding
// left by an older release is removed); a worker token's CSR is approved
// for the name of the RUNNING VM without a Node, denied after the grace
// for a member's name or an invented one, and denied at once for a token
// onekube did not mint.
func TestCSRApprover(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	admin := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	legacy := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: legacyWorkerAutoApprove},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:certificates.k8s.io:certificatesigningrequests:nodeclient"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: kubeadm.WorkerTokenGroup}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, legacy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := EnsureWorkerJoinRBAC(ctx, admin); err != nil {
		t.Fatal(err)
	}
	worker, err := mintToken(ctx, admin, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	w := tokenClient(s, worker.Token.Reveal())
	// What csrapproving's SubjectAccessReview asks (sarapprove.go).
	sar, err := w.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "nodeclient", Verb: "create"}}}, metav1.CreateOptions{})
	if err != nil || sar.Status.Allowed {
		t.Fatalf("a worker token may create certificatesigningrequests/nodeclient (auto-approval): %v %+v", err, sar.Status)
	}

	// A token with the worker group that onekube did not mint.
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.BootstrapTokenSecretPrefix + "frgn00", Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{bootstrapapi.BootstrapTokenIDKey: "frgn00", bootstrapapi.BootstrapTokenSecretKey: "0123456789abcdef",
			bootstrapapi.BootstrapTokenUsageAuthentication: "true", bootstrapapi.BootstrapTokenExtraGroupsKey: kubeadm.WorkerTokenGroup},
	}
	if _, err := admin.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	og := newFakeService(10)
	og.add("master", 10, nil)
	og.add("worker", 11, nil)
	addNode(t, admin, "master-10", 10)
	file := func(cs kubernetes.Interface, cn string) string {
		t.Helper()
		c, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "node-csr-"},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: nodeCSR(t, cn), SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Name
	}
	right := file(w, "system:node:worker-11")
	member := file(w, "system:node:master-10")
	invented := file(w, "system:node:evil-99")
	unknown := file(tokenClient(s, "frgn00.0123456789abcdef"), "system:node:worker-11")
	state := func(name string) string {
		t.Helper()
		c, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cond := range c.Status.Conditions {
			return string(cond.Type)
		}
		return "Pending"
	}
	clock := systemtest.NewClock(time.Now())
	a := &CSRApprover{OneGate: og, Client: admin, Clock: clock, Log: slog.New(slog.DiscardHandler)}
	mustTick(t, a)
	for name, want := range map[string]string{right: "Approved", member: "Pending", invented: "Pending", unknown: "Denied"} {
		if got := state(name); got != want {
			t.Errorf("after one tick, CSR %s: %s, want %s", name, got, want)
		}
	}
	clock.Advance(CSRGrace + time.Second)
	mustTick(t, a)
	for name, want := range map[string]string{right: "Approved", member: "Denied", invented: "Denied", unknown: "Denied"} {
		if got := state(name); got != want {
			t.Errorf("past the grace, CSR %s: %s, want %s", name, got, want)
		}
	}
	// A VM oned does not run is expected by nobody.
	og.set(func(f *fakeService) { f.vms[11].LCMState = onegate.LCMShutdownPoweroff })
	late := file(w, "system:node:worker-11")
	clock.Advance(CSRGrace + time.Second)
	mustTick(t, a)
	if got := state(late); got != "Denied" {
		t.Errorf("CSR for a VM shutting down: %s, want Denied", got)
	}
}

// FuzzJudgeCSR: whatever a token holder files, judgeCSR never panics and
// approves only a kubelet client request for an expected name.
func FuzzJudgeCSR(f *testing.F) {
	t := &testing.T{}
	f.Add([]byte(nodeCSR(t, "system:node:worker-11")), "system:bootstrap:abcdef", string(certificatesv1.KubeAPIServerClientKubeletSignerName))
	f.Add([]byte(nodeCSR(t, "system:node:master-10")), "system:bootstrap:abcdef", string(certificatesv1.KubeAPIServerClientKubeletSignerName))
	f.Add([]byte("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"), "system:bootstrap:abcdef", "x")
	f.Add([]byte{}, "", "")
	now := time.Now()
	facts := csrFacts{tokens: map[string]bool{"abcdef": true}, expected: map[string]int{"worker-11": 11}, now: now, grace: time.Minute}
	f.Fuzz(func(t *testing.T, req []byte, user, signer string) {
		c := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
			Username: user, Request: req, SignerName: signer,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}
		v, _ := judgeCSR(c, facts)
		if v != csrApprove {
			return
		}
		name, err := kubeletClientName(c)
		if err != nil || name != "worker-11" || user != "system:bootstrap:abcdef" {
			t.Fatalf("approved %q from %q (%v)", name, user, err)
		}
	})
}
