package serve

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/safetext"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// CSRApprover decides the node-client CSRs filed with onekube's worker
// join tokens (LeaderOnly). Every VM of the service can read a worker
// token while some VM waits to join, so an automatic approval would give
// any of them a node credential under any name (issue 20, finding 2).
// kube-controller-manager's csrapproving controller approves a
// kube-apiserver-client-kubelet CSR when its requester may create
// certificatesigningrequests/nodeclient (pkg/controller/certificates/
// approver/sarapprove.go, recognizers); kubeadm grants that only to its
// own group system:bootstrappers:kubeadm:default-node-token
// (cmd/kubeadm/app/phases/bootstraptoken/node/tlsbootstrap.go,
// AutoApproveNodeBootstrapTokens, binding kubeadm:node-autoapprove-bootstrap).
// onekube's worker group (kubeadm.WorkerTokenGroup) no longer has it
// (agent/kubeadm/workerrbac.yaml), so its CSRs stay pending until this
// loop judges them (judgeCSR):
//
//   - the requester is a live bootstrap token onekube minted (else denied);
//   - the request is a kubelet client certificate, as the controller
//     checks it (pkg/apis/certificates/helpers.go ValidateKubeletClientCSR);
//   - the name is <prefix>-<VMID> (context.NodeName) of a VM the cluster
//     expects: in OneFlow's roles[].nodes, RUNNING by oned, and without a
//     live Node (the tokens loop's rule). Anything else waits CSRGrace
//     (the service read may predate a VM just created) and is then denied.
//
// Control-plane joins carry kubeadm's group and are approved by the
// controller as before. One worker token serves every waiting VM, so the
// binding is to the set of expected VMs, not to one VM: a holder can
// still take the name of a VM that waits at that moment (docs/trust.md).
type CSRApprover struct {
	OneGate gate.OneGate
	Client  kubernetes.Interface
	Clock   system.Clock
	Log     *slog.Logger
	// Prefix is ONEAPP_K8S_NODENAME from this master's context (a
	// service-wide input); names derived from the role are accepted too.
	Prefix string
	// Every is the tick (DefaultCSREvery); Grace is CSRGrace.
	Every, Grace time.Duration
	// SilentGrace is the tokens loop's (a Node silent that long no longer
	// stands for its VM).
	SilentGrace time.Duration
}

// Defaults of the CSR approver.
const (
	// DefaultCSREvery keeps a worker's TLS bootstrap within seconds; a
	// tick reads OneGate only while an onekube CSR is pending.
	DefaultCSREvery = 3 * time.Second
	// CSRGrace is how long a CSR naming no expected VM stays pending.
	CSRGrace = time.Minute
)

var _ Loop = (*CSRApprover)(nil)

// Name implements Loop.
func (a *CSRApprover) Name() string { return "csr-approver" }

// csrVerdict is judgeCSR's answer.
type csrVerdict int

const (
	csrWait csrVerdict = iota
	csrApprove
	csrDeny
)

// csrFacts is what judgeCSR weighs, read once per tick.
type csrFacts struct {
	// tokens are the IDs of onekube's live bootstrap tokens.
	tokens map[string]bool
	// expected maps each node name the cluster expects to its VM.
	expected map[string]int
	now      time.Time
	grace    time.Duration
}

// judgeCSR decides one pending CSR of the worker group, with why.
func judgeCSR(csr *certificatesv1.CertificateSigningRequest, f csrFacts) (csrVerdict, string) {
	id, ok := strings.CutPrefix(csr.Spec.Username, "system:bootstrap:")
	if !ok {
		return csrDeny, fmt.Sprintf("requester %q is no live join token of onekube (not a bootstrap token)", safetext.Sanitize(csr.Spec.Username, 80))
	}
	if !f.tokens[id] {
		// The token ID is part of a token: it stays out of the reason.
		return csrDeny, "requester is a bootstrap token that is no live join token of onekube"
	}
	name, err := kubeletClientName(csr)
	if err != nil {
		return csrDeny, err.Error()
	}
	if vmid, ok := f.expected[name]; ok {
		return csrApprove, fmt.Sprintf("node %s is VM %d, which the cluster expects to join", name, vmid)
	}
	if f.now.Sub(csr.CreationTimestamp.Time) < f.grace {
		return csrWait, ""
	}
	return csrDeny, fmt.Sprintf("node %s is no VM the cluster expects to join", name)
}

// kubeletClientName checks a kubelet client CSR as the csrapproving
// controller does and returns its node name.
func kubeletClientName(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		return "", fmt.Errorf("signer %q is not the kubelet client signer", csr.Spec.SignerName)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "", fmt.Errorf("the request is no PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("the request does not parse: %v", err)
	}
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) ||
		len(req.DNSNames)+len(req.EmailAddresses)+len(req.IPAddresses)+len(req.URIs) > 0 {
		return "", fmt.Errorf("not a kubelet client certificate (organization %q, or a subject alternative name)", req.Subject.Organization)
	}
	for _, u := range csr.Spec.Usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth:
		default:
			return "", fmt.Errorf("usage %q is not a kubelet client certificate's", u)
		}
	}
	name, ok := strings.CutPrefix(req.Subject.CommonName, "system:node:")
	if !ok || name == "" {
		return "", fmt.Errorf("common name %q is no node", req.Subject.CommonName)
	}
	return name, nil
}

// pendingWorkerCSRs are the CSRs of the worker group nobody decided yet.
func pendingWorkerCSRs(list []certificatesv1.CertificateSigningRequest) []*certificatesv1.CertificateSigningRequest {
	var out []*certificatesv1.CertificateSigningRequest
	for i := range list {
		c := &list[i]
		if !slices.Contains(c.Spec.Groups, kubeadm.WorkerTokenGroup) || len(c.Status.Conditions) > 0 {
			continue
		}
		out = append(out, c)
	}
	return out
}

// Tick implements Loop.
func (a *CSRApprover) Tick(ctx context.Context) (time.Duration, error) {
	if a.Every <= 0 {
		a.Every = DefaultCSREvery
	}
	if a.Grace <= 0 {
		a.Grace = CSRGrace
	}
	if a.Log == nil {
		a.Log = slog.New(slog.DiscardHandler)
	}
	if a.SilentGrace <= 0 {
		a.SilentGrace = DefaultSilentGrace
	}
	list, err := a.Client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing CSRs: %w", err)
	}
	pending := pendingWorkerCSRs(list.Items)
	if len(pending) == 0 {
		return a.Every, nil
	}
	f, err := a.facts(ctx)
	if err != nil {
		return 0, err
	}
	for _, c := range pending {
		v, why := judgeCSR(c, f)
		if v == csrWait {
			continue
		}
		cond := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved,
			Status: corev1.ConditionTrue, Reason: "OnekubeExpectedVM", Message: why, LastUpdateTime: metav1.NewTime(f.now)}
		if v == csrDeny {
			cond.Type, cond.Reason = certificatesv1.CertificateDenied, "OnekubeUnexpected"
		}
		c.Status.Conditions = append(c.Status.Conditions, cond)
		if _, err := a.Client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, c.Name, c, metav1.UpdateOptions{}); err != nil {
			return 0, fmt.Errorf("deciding CSR %s: %w", c.Name, err)
		}
		a.Log.Info("node client CSR "+map[csrVerdict]string{csrApprove: "approved", csrDeny: "denied"}[v], "csr", c.Name, "why", why)
	}
	return a.Every, nil
}

// facts reads the live tokens, the service and the Nodes.
func (a *CSRApprover) facts(ctx context.Context) (csrFacts, error) {
	now := a.Clock.Now()
	f := csrFacts{tokens: map[string]bool{}, expected: map[string]int{}, now: now, grace: a.Grace}
	toks, err := ownedTokens(ctx, a.Client)
	if err != nil {
		return f, err
	}
	for _, t := range toks {
		if t.Expires.IsZero() || t.Expires.After(now) {
			f.tokens[t.ID] = true
		}
	}
	svc, err := readService(ctx, a.OneGate)
	if err != nil {
		return f, err
	}
	nodes, err := listVMNodes(ctx, a.Client)
	if err != nil {
		return f, err
	}
	for _, id := range sortedKeys(svc.Roles) {
		if !nodesSilent(nodes.claimed[id], now, a.SilentGrace) {
			continue
		}
		vm, err := a.OneGate.GetVMByID(ctx, id)
		if err != nil || whyNotWaiting(vm) != "" {
			continue // unread or not RUNNING: expected by nobody this tick
		}
		role := svc.Roles[id]
		f.expected[vmcontext.NodeName(strings.TrimSpace(a.Prefix), role, id)] = id
		f.expected[vmcontext.NodeName("", role, id)] = id
	}
	return f, nil
}

// nodesSilent: none of a VM's Nodes has a kubelet that reports (none at
// all included), as the tokens loop reads it.
func nodesSilent(ns []corev1.Node, now time.Time, grace time.Duration) bool {
	for _, n := range ns {
		if !kubeletSilentFor(n, now, grace) {
			return false
		}
	}
	return true
}
