//go:build realbed

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/leave"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/agent/testbed"
	"github.com/onekube/onekube/context/onegate"
)

// TestBedLivingCluster: serve's loops and leave against kubeadm's real
// cluster, where the parts are real kubeadm, kubelet credentials from a
// real TLS bootstrap and kube-controller-manager's bootstrapsigner:
//   - the tokens loop mints a token for a waiting VM that the real
//     `kubeadm join` accepts (its discovery needs the JWS signature the
//     bootstrapsigner adds for tokens with the signing usage), retires it
//     once that VM's Node exists and deletes it after the retire grace;
//   - a worker leaves with its own kubelet credential: it cordons
//     itself, evicts its pod under a PodDisruptionBudget and deletes its
//     Node;
//   - the Node of a VM that vanished (powered off and gone from the
//     service) is deleted by the cleanup loop after its grace period.
func TestBedLivingCluster(t *testing.T) {
	b := newBed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	boot := func(name, ip string) *testbed.VM { return bootVM(t, b, name, ip) }
	cp := boot("cp", "192.0.2.10")
	c, out, err := b.InitControlPlane(ctx, cp, testbed.NodeOptions{NodeName: "master-10"})
	if err != nil {
		t.Fatalf("kubeadm init: %v\n%s", err, out)
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(cfg)
	w11 := boot("w11", "192.0.2.11")
	if out, err := c.Join(ctx, w11, testbed.NodeOptions{NodeName: "worker-11"}); err != nil {
		t.Fatalf("kubeadm join: %v\n%s", err, out)
	}
	label(t, admin, map[string]int{"master-10": 10, "worker-11": 11})

	og := &bedService{vms: map[int]string{10: "master", 11: "worker", 12: "worker"}}
	// The loop's clock is the test's: the retire grace passes without
	// waiting two minutes. Expiries it writes are still real times, which
	// the API server's tokencleaner and kubeadm judge.
	clock := systemtest.NewClock(time.Now().Truncate(time.Second))
	tokens := &serve.Tokens{OneGate: og, Client: admin, Clock: clock, Fast: time.Second}
	if _, err := tokens.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	minted := tokens.Report().(serve.TokensReport)
	if len(minted.Waiting) != 1 || minted.Waiting[0] != 12 || minted.Tokens != 1 {
		t.Fatalf("tokens report %+v", minted)
	}
	tok := ownedToken(t, admin)
	w12 := boot("w12", "192.0.2.12")
	// A worker token's node-client CSR waits for serve's approver (no
	// automatic approval for onekube's worker group), as on a real master.
	approve, stopApprove := context.WithCancel(ctx)
	approved := make(chan struct{})
	go func() {
		defer close(approved)
		a := &serve.CSRApprover{OneGate: og, Client: admin, Clock: clock}
		for approve.Err() == nil {
			if _, err := a.Tick(approve); err != nil && approve.Err() == nil {
				t.Logf("csr approver: %v", err)
			}
			select {
			case <-approve.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	out, err = c.Join(ctx, w12, testbed.NodeOptions{NodeName: "worker-12", Token: tok})
	stopApprove()
	<-approved
	if err != nil {
		t.Fatalf("kubeadm join with the minted token: %v\n%s", err, out)
	}
	label(t, admin, map[string]int{"worker-12": 12})
	if _, err := tokens.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	// Nobody waits now: the token is retired (no longer handed out), and
	// deleted once the grace has passed.
	if got := ownedTokens(t, admin); len(got) != 1 || got[0].Retired.IsZero() {
		t.Errorf("after the last waiting VM joined: want one retired token, got %+v", got)
	}
	clock.Advance(serve.DefaultRetireGrace)
	if _, err := tokens.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ownedTokens(t, admin); len(got) != 0 {
		t.Errorf("the token outlived its retire grace: %d left", len(got))
	}

	// worker-11 leaves with the credential its kubelet got from the real
	// TLS bootstrap.
	if err := serve.EnsureNodeSelfRemoval(ctx, admin); err != nil {
		t.Fatal(err)
	}
	pem, err := w11.ReadFile("/var/lib/kubelet/pki/kubelet-client-current.pem")
	if err != nil {
		t.Fatal(err)
	}
	nodeCfg := rest.CopyConfig(cfg)
	nodeCfg.TLSClientConfig = rest.TLSClientConfig{CAData: cfg.TLSClientConfig.CAData, CertData: pem, KeyData: pem}
	node := kubernetes.NewForConfigOrDie(nodeCfg)
	zero := int64(0)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "worker-11", TerminationGracePeriodSeconds: &zero, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10.1"}}}}
	waitDefaultSA(t, admin)
	if _, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	zeroMin := intstr.FromInt32(0)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &zeroMin, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	if _, err := admin.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := leave.Run(ctx, leave.Options{Client: node, Node: "worker-11", Mode: leave.ModeTerminate, Budget: time.Minute, EvictRetry: time.Second})
	if err != nil || !res.NodeDeleted || res.Evicted != 1 {
		t.Fatalf("leave: %+v %v", res, err)
	}
	if _, err := admin.CoreV1().Nodes().Get(ctx, "worker-11", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("worker-11 after leave: %v", err)
	}

	// worker-12's VM dies with its host and leaves the service.
	w12.PowerOff()
	og.remove(12)
	cl := &serve.Cleanup{OneGate: og, Client: admin, Grace: 2 * time.Second, Every: 500 * time.Millisecond}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := cl.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.CoreV1().Nodes().Get(ctx, "worker-12", metav1.GetOptions{}); apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cleanup loop never deleted worker-12")
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func label(t *testing.T, cs kubernetes.Interface, ids map[string]int) {
	t.Helper()
	for name, id := range ids {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, kubeadm.LabelVMID, strconv.Itoa(id))
		if _, err := cs.CoreV1().Nodes().Patch(context.Background(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func ownedToken(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	for _, tok := range ownedTokens(t, cs) {
		return tok.Token.Reveal()
	}
	return ""
}

// ownedTokens lists the bootstrap tokens onekube owns, retired or not.
func ownedTokens(t *testing.T, cs kubernetes.Interface) []kubeadm.OwnedToken {
	t.Helper()
	list, err := cs.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{FieldSelector: "type=bootstrap.kubernetes.io/token"})
	if err != nil {
		t.Fatal(err)
	}
	var out []kubeadm.OwnedToken
	for i := range list.Items {
		if tok, ok, _ := kubeadm.ReadTokenSecret(&list.Items[i]); ok {
			out = append(out, tok)
		}
	}
	return out
}

func waitDefaultSA(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := cs.CoreV1().ServiceAccounts("default").Get(context.Background(), "default", metav1.GetOptions{}); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no default ServiceAccount")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// bedService is OneGate for the acting master's loops: a RUNNING service
// whose VMs all run and publish nothing.
type bedService struct {
	agent.OneGate
	mu  sync.Mutex
	vms map[int]string // VM ID: role
	ut  map[string]string
}

func (s *bedService) remove(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.vms, id)
}

func (s *bedService) GetService(context.Context) (*onegate.Service, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc := &onegate.Service{State: onegate.ServiceRunning}
	for _, name := range []string{"master", "worker"} {
		role := onegate.Role{Name: name}
		for id, r := range s.vms {
			if r == name {
				role.Nodes = append(role.Nodes, onegate.Node{VMID: id})
			}
		}
		svc.Roles = append(svc.Roles, role)
	}
	return svc, nil
}

func (s *bedService) GetVMByID(_ context.Context, id int) (*onegate.VM, error) {
	return &onegate.VM{ID: id, State: onegate.StateActive, LCMState: onegate.LCMRunning, UserTemplate: map[string]string{}}, nil
}

func (s *bedService) GetVM(context.Context) (*onegate.VM, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ut := map[string]string{}
	for k, v := range s.ut {
		ut[k] = v
	}
	return &onegate.VM{ID: 10, UserTemplate: ut}, nil
}

func (s *bedService) UpdateVM(_ context.Context, kvs ...onegate.KV) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ut == nil {
		s.ut = map[string]string{}
	}
	for _, kv := range kvs {
		s.ut[kv.Key] = kv.Value
	}
	return nil
}

func (s *bedService) EraseVMKey(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ut, key)
	return nil
}
