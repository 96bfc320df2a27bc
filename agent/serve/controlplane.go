package serve

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/onekube/onekube/agent/certgrant"
	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/protocol"
)

// Timings of the control-plane loop. kubeadm deletes the kubeadm-certs
// Secret with the bootstrap token it owns after 2 h
// (cmd/kubeadm/app/constants DefaultCertTokenDuration; copycerts
// createShortLivedBootstrapToken): a key is handed out only while it has
// certMargin of that left, so a join never starts on certificates about
// to vanish.
const (
	CertTTL       = 2 * time.Hour
	certMargin    = 30 * time.Minute
	grantTokenTTL = time.Hour
	cpFastTick    = 2 * time.Second
	cpIdleTick    = 30 * time.Second
	cpPendingFast = 10 * time.Minute
	// A stale etcd member goes only after its own health checks failed
	// at least staleProbes times in a row over at least staleFor: one slow
	// probe is no dead member.
	staleProbes = 3
	staleFor    = 15 * time.Second
	// maxPresentAddrs bounds the addresses tried for one presentation.
	maxPresentAddrs = 4
)

// Uploader stores the control-plane certificates in kubeadm-certs again,
// encrypted with key (kubeadm init phase upload-certs).
type Uploader interface {
	UploadCerts(ctx context.Context, key vmcontext.Secret) error
}

// Members is the etcd membership the loop manages; *etcdm.Client
// implements it.
type Members interface {
	Members(ctx context.Context) ([]etcdm.Member, error)
	RemoveMember(ctx context.Context, peerIP netip.Addr) error
}

// ControlPlane is the acting master's side of a master joining
// (docs/architecture.md §3). Masters join one at a time in VM-ID order;
// the one whose turn it is publishes an age recipient once its disk is
// clean, and presents the same recipient at its own address
// (certgrant.Serve). The USER_TEMPLATE recipient is a claim any VM of the
// service can write; the address is oned's word. So for that request,
// once, and only for a master RUNNING in the master role whose
// presentation at one of its NIC addresses carries the requested
// recipient, the loop removes the stale etcd member at that address (a
// recreated master's, or a failed attempt's: only after its own health
// checks failed for a while; refused loudly when quorum would break),
// makes sure the uploaded certificates have time left (uploading fresh
// ones otherwise), mints a bootstrap token, and publishes both sealed to
// the presented recipient. It erases the grant as soon as that master is
// READY or its request changes. It also publishes the etcd member list for
// `onekube-flow status`.
type ControlPlane struct {
	OneGate    gate.OneGate
	Client     kubernetes.Interface
	Uploader   Uploader
	Members    Members // nil: no stacked etcd to manage
	Clock      system.Clock
	Self       int
	MasterRole string
	// InitKey, when set, returns the key kubeadm init uploaded on this
	// master and a time no later than the upload, so the first joins need
	// no second upload. It is trusted in the first term only (NewTerm).
	InitKey func() (vmcontext.Secret, time.Time, bool)
	// Dial connects to a joining master's presentation (nil: a
	// net.Dialer; the simulated cluster maps addresses).
	Dial certgrant.Dialer
	// Idle is the tick while no master is in turn (cpIdleTick when 0);
	// the bed shortens it to observe ticks rather than sleep.
	Idle time.Duration

	terms    int // terms begun (NewTerm); 0 without an elector
	started  bool
	key      vmcontext.Secret
	uploaded time.Time
	grant    string // published by this master, "" for none
	tokenID  string // the token minted for grant, if this run minted it
	tokenFor int    // the VM that grant (and so tokenID) was sealed to
	etcd     string // ONEGATE_K8S_ETCD as published
	etcdErr  string // ONEGATE_K8S_ETCD_ERROR as published
	joining  int
	waiting  string // why the request in turn is not answered yet
	// sick holds, per etcd member, since when and in how many listings in
	// a row its health check failed.
	sick map[memberKey]sickness
	// pendingSince is when a master was last seen neither READY nor failed
	// after all were (zero: none pending).
	pendingSince time.Time
}

var (
	_ Loop       = (*ControlPlane)(nil)
	_ TermScoped = (*ControlPlane)(nil)
)

// Name implements Loop.
func (c *ControlPlane) Name() string { return "controlplane" }

func (c *ControlPlane) idleTick() time.Duration {
	if c.Idle > 0 {
		return c.Idle
	}
	return cpIdleTick
}

// Report implements Reporter.
func (c *ControlPlane) Report() any {
	return map[string]any{"joining_vm": c.joining, "granted": c.grant != "", "waiting": c.waiting, "etcd": c.etcd, "etcd_error": c.etcdErr}
}

// NewTerm implements TermScoped. Between two terms another master may have
// acted: uploaded the certificates again under a key this one never saw
// (the upload replaces kubeadm-certs, so the key held here no longer
// decrypts it; kubeadm init's included) and changed what is published.
// So nothing learnt is carried over: the first tick reads back what this
// master publishes, and the first grant uploads afresh. tokenID stays, to
// delete the token of this master's grant if it is withdrawn.
func (c *ControlPlane) NewTerm() {
	c.terms++
	c.started = false
	c.key, c.uploaded = vmcontext.Secret{}, time.Time{}
	c.joining, c.pendingSince = 0, time.Time{}
}

// Tick implements Loop.
func (c *ControlPlane) Tick(ctx context.Context) (time.Duration, error) {
	if !c.started {
		vm, err := c.OneGate.GetVM(ctx)
		if err != nil {
			return 0, err
		}
		ut := vm.UserTemplate
		c.grant, c.etcd, c.etcdErr = ut[vmcontext.KeyPubCertKey], ut[vmcontext.KeyPubEtcd], ut[vmcontext.KeyPubEtcdError]
		if c.InitKey != nil && c.terms <= 1 {
			c.key, c.uploaded, _ = c.InitKey()
		}
		c.started = true
	}
	masters, err := c.masters(ctx)
	if err != nil {
		return 0, err
	}
	var ms []etcdm.Member
	var listErr error
	if c.Members != nil {
		if ms, listErr = c.Members.Members(ctx); listErr == nil {
			c.observe(ms)
			if err := c.set(ctx, vmcontext.KeyPubEtcd, &c.etcd, etcdm.Summary(ms)); err != nil {
				return 0, err
			}
		}
	}
	j, recipient, pending := turn(masters, c.Self)
	c.joining, c.waiting = 0, ""
	if j != nil {
		c.joining = j.ID
	}
	if c.grant != "" && !c.grantFor(j, recipient) {
		if err := c.withdraw(ctx); err != nil {
			return 0, err
		}
	}
	if c.grant == "" && c.tokenID != "" && turnOver(masters, c.tokenFor) {
		// The grantee's join is over: its token has nothing left to serve.
		c.dropToken(ctx)
	}
	if !pending {
		c.pendingSince = time.Time{}
	} else if c.pendingSince.IsZero() {
		c.pendingSince = c.Clock.Now()
	}
	if j == nil {
		// A master boots or waits for its turn: its request is near,
		// unless it has been down for long (then OneGate is spared).
		if pending && c.Clock.Now().Sub(c.pendingSince) < cpPendingFast {
			return cpFastTick, nil
		}
		return c.idleTick(), nil
	}
	if c.grantFor(j, recipient) || grantedElsewhere(masters, c.Self, j.ID, recipient, c.Clock.Now()) {
		return cpFastTick, nil
	}
	if listErr != nil {
		return 0, listErr
	}
	why, err := c.answer(ctx, j, recipient, ms)
	if err != nil {
		return 0, err
	}
	c.waiting = why
	if why != "" && c.Clock.Now().Sub(c.pendingSince) >= cpPendingFast {
		// A request nobody stands behind (a sibling's, or a joiner that
		// died) is looked at again, slowly.
		return c.idleTick(), nil
	}
	return cpFastTick, nil
}

// masters reads the master role's VMs, lowest ID first.
func (c *ControlPlane) masters(ctx context.Context) ([]*onegate.VM, error) {
	svc, err := c.OneGate.GetService(ctx)
	if err != nil {
		return nil, err
	}
	role := svc.Role(c.MasterRole)
	if role == nil {
		return nil, fmt.Errorf("service %d has no role %q", svc.ID, c.MasterRole)
	}
	var out []*onegate.VM
	for _, n := range role.Nodes {
		if n.VMID == c.Self {
			out = append(out, &onegate.VM{ID: c.Self})
			continue
		}
		vm, err := c.OneGate.GetVMByID(ctx, n.VMID)
		if err != nil {
			return nil, fmt.Errorf("reading master VM %d: %w", n.VMID, err)
		}
		out = append(out, vm)
	}
	slices.SortFunc(out, func(a, b *onegate.VM) int { return a.ID - b.ID })
	return out, nil
}

// turn is the master whose turn it is to join, with its recipient: the
// lowest-ID master that is neither READY nor failed, if it asked. Masters
// behind it wait for it, as it waits for those before it. pending says
// some master is neither READY nor failed.
func turn(masters []*onegate.VM, self int) (vm *onegate.VM, recipient protocol.Claim, pending bool) {
	for _, vm := range masters {
		if vm.ID == self {
			continue
		}
		if joinOver(vm) {
			continue
		}
		// A request only, and it stays a Claim: answer seals to the
		// recipient the joiner presents at its oned-reported address.
		r := vm.Claim(vmcontext.KeyPubRecipient)
		if r.Empty() {
			return nil, protocol.Claim{}, true
		}
		return vm, r, true
	}
	return nil, protocol.Claim{}, false
}

// joinOver: the master says it joined (READY=YES) or failed. These are
// claims a sibling can write too; believed, they can only end a join's
// turn early (its token dropped), never send anything to anyone.
func joinOver(vm *onegate.VM) bool {
	// Claims: believed, they can only end a turn early (see above).
	return strings.EqualFold(vm.Claim(vmcontext.KeyReady).Unverified(), "YES") ||
		strings.TrimSpace(vm.Claim(vmcontext.KeyPubPhase).Unverified()) == protocol.PhaseFailed
}

// turnOver says the master vmid joins no more: joinOver, or no longer a
// master of the service. A missing recipient does not end it (turn reads
// none while the joiner, or a sibling, erased it).
func turnOver(masters []*onegate.VM, vmid int) bool {
	for _, vm := range masters {
		if vm.ID == vmid {
			return joinOver(vm)
		}
	}
	return true
}

func (c *ControlPlane) grantFor(j *onegate.VM, recipient protocol.Claim) bool {
	if j == nil || c.grant == "" {
		return false
	}
	g, err := certgrant.Parse(c.grant)
	// Compared only: whether this master's grant still answers the request.
	return err == nil && g.VMID == j.ID && g.Recipient == strings.TrimSpace(recipient.Unverified()) && g.Expires.After(c.Clock.Now())
}

// grantedElsewhere: another master (a former acting one) granted this
// request; the joiner may be using it, so its etcd member must be left
// alone and nothing uploaded over its certificates.
func grantedElsewhere(masters []*onegate.VM, self, vmid int, recipient protocol.Claim, now time.Time) bool {
	for _, vm := range masters {
		if vm.ID == self {
			continue
		}
		// A sealed grant another master published: believed, it can
		// only make this master wait (no member removed, no upload).
		g, err := certgrant.Parse(vm.Claim(vmcontext.KeyPubCertKey).Unverified())
		if err == nil && g.VMID == vmid && g.Recipient == strings.TrimSpace(recipient.Unverified()) && g.Expires.After(now) { // compared only
			return true
		}
	}
	return false
}

// answer serves one request, once, or says why not yet. Only vouched
// data lets it act: the VM's state and NIC addresses (oned), its role
// (OneFlow, through masters), what answers at its address, and etcd's
// own health checks. The USER_TEMPLATE recipient only asks.
func (c *ControlPlane) answer(ctx context.Context, j *onegate.VM, recipient protocol.Claim, ms []etcdm.Member) (waiting string, err error) {
	if j.State != onegate.StateActive || j.LCMState != onegate.LCMRunning {
		return fmt.Sprintf("VM %d asks to join but is not RUNNING (STATE %d, LCM_STATE %d)", j.ID, j.State, j.LCMState), nil
	}
	p, at, err := c.presentation(ctx, j)
	if err != nil {
		return fmt.Sprintf("VM %d asks to join but presents no recipient at its addresses: %v", j.ID, err), nil
	}
	if p.Recipient != strings.TrimSpace(recipient.Unverified()) { // compared only; the seal below takes p's
		// Another VM rewrote the request, or the joiner is between two
		// attempts: either way, no grant for the published recipient.
		return fmt.Sprintf("VM %d presents at %s a recipient other than the one in its USER_TEMPLATE", j.ID, at), nil
	}
	if c.Members != nil {
		stale := false
		for _, m := range ms {
			ip := m.PeerIP()
			switch {
			case !slices.Contains(j.Addrs(), ip):
			case m.Healthy:
				// Its etcd runs: a join under way (a grant that expired
				// in its hands), not a stale member. Never cut it.
				return "", fmt.Errorf("VM %d's etcd member at %s is live; not granting again while it runs", j.ID, ip)
			case ip != at:
				// Not where the joiner stands now: left alone.
			case !c.deadLongEnough(m):
				return fmt.Sprintf("VM %d's etcd member at %s fails its health checks; waiting %s before calling it stale", j.ID, ip, staleFor), nil
			default:
				stale = true
			}
		}
		if stale {
			err := c.Members.RemoveMember(ctx, at)
			if errors.Is(err, etcdm.ErrQuorum) {
				msg := fmt.Sprintf("VM %d cannot join: its stale etcd member stays, %v", j.ID, err)
				if perr := c.set(ctx, vmcontext.KeyPubEtcdError, &c.etcdErr, limit(msg)); perr != nil {
					return "", errors.Join(err, perr)
				}
				return "", err
			}
			if err != nil {
				return "", fmt.Errorf("removing VM %d's stale etcd member: %w", j.ID, err)
			}
		}
	}
	now := c.Clock.Now()
	if c.key.IsZero() || now.After(c.uploaded.Add(CertTTL-certMargin)) {
		key, err := kubeadm.GenerateCertificateKey(nil)
		if err != nil {
			return "", err
		}
		if err := c.Uploader.UploadCerts(ctx, key); err != nil {
			return "", fmt.Errorf("uploading the control-plane certificates: %w", err)
		}
		c.key, c.uploaded = key, now
	}
	tok, id, err := c.mintToken(ctx, now)
	if err != nil {
		return "", err
	}
	expires := c.uploaded.Add(CertTTL - certMargin)
	if t := now.Add(grantTokenTTL); t.Before(expires) {
		expires = t
	}
	// Sealed to what the joiner's address presented, never to the
	// USER_TEMPLATE's word (they are equal here, checked above).
	g, err := certgrant.Seal(j.ID, p.Recipient, expires, certgrant.Payload{CertificateKey: c.key, Token: tok})
	if err != nil {
		return "", err
	}
	if err := c.OneGate.UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyPubCertKey, Value: g.String()}); err != nil {
		return "", err
	}
	// A token still kept for this VM served an attempt it has given up:
	// it presents again, so it runs a new one.
	c.dropToken(ctx)
	c.grant, c.tokenID, c.tokenFor = g.String(), id, j.ID
	return "", c.set(ctx, vmcontext.KeyPubEtcdError, &c.etcdErr, "")
}

// presentation reads what the joining master serves at its NIC
// addresses as oned reports them, the first that answers for j.
func (c *ControlPlane) presentation(ctx context.Context, j *onegate.VM) (certgrant.Presentation, netip.Addr, error) {
	addrs := j.Addrs()
	if len(addrs) == 0 {
		return certgrant.Presentation{}, netip.Addr{}, errors.New("OneGate reports no NIC address")
	}
	if len(addrs) > maxPresentAddrs {
		addrs = addrs[:maxPresentAddrs]
	}
	var errs []error
	for _, a := range addrs {
		p, err := certgrant.Fetch(ctx, c.Dial, a, j.ID)
		if err == nil {
			return p, a, nil
		}
		errs = append(errs, err)
	}
	return certgrant.Presentation{}, netip.Addr{}, errors.Join(errs...)
}

// mintToken creates a bootstrap token for one join, as `kubeadm token
// create` would: a Secret kube-system/bootstrap-token-<id> that the
// token cleaner deletes at its expiration.
func (c *ControlPlane) mintToken(ctx context.Context, now time.Time) (vmcontext.Secret, string, error) {
	tok, err := kubeadm.GenerateToken(nil)
	if err != nil {
		return vmcontext.Secret{}, "", err
	}
	id, secret, _ := strings.Cut(tok.Reveal(), ".")
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.BootstrapTokenSecretPrefix + id, Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               id,
			bootstrapapi.BootstrapTokenSecretKey:           secret,
			bootstrapapi.BootstrapTokenExpirationKey:       now.Add(grantTokenTTL).UTC().Format(time.RFC3339),
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
			// kubeadm's group: a control-plane join reads kubeadm-certs.
			bootstrapapi.BootstrapTokenExtraGroupsKey: kubeadm.KubeadmTokenGroup,
			bootstrapapi.BootstrapTokenDescriptionKey: "onekube: one control-plane join",
		},
	}
	if _, err := c.Client.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return vmcontext.Secret{}, "", fmt.Errorf("creating a bootstrap token for the join: %w", err)
	}
	return tok, id, nil
}

// withdraw erases this master's grant from OneGate. The token minted for
// it stays while its grantee's turn lasts (Tick drops it after): the
// grantee may have opened the grant already and be joining with it, and a
// sibling can change the request at will by rewriting the grantee's
// recipient. Deleting the token then failed the join's TLS bootstrap
// ("invalid bearer token"). Only the grantee could open the grant, so the
// token stays as private as it was; it expires within grantTokenTTL.
func (c *ControlPlane) withdraw(ctx context.Context) error {
	if err := gate.EraseKeys(ctx, c.OneGate, vmcontext.KeyPubCertKey); err != nil {
		return fmt.Errorf("withdrawing the certificate key grant: %w", err)
	}
	c.grant = ""
	return nil
}

// dropToken deletes the token of this master's last grant, if any.
func (c *ControlPlane) dropToken(ctx context.Context) {
	if c.tokenID == "" {
		return
	}
	// Best effort: the token cleaner removes it at its expiry anyway.
	_ = c.Client.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, bootstrapapi.BootstrapTokenSecretPrefix+c.tokenID, metav1.DeleteOptions{})
	c.tokenID, c.tokenFor = "", 0
}

// set publishes key=value when it changed; "" erases it.
func (c *ControlPlane) set(ctx context.Context, key string, cur *string, value string) error {
	if *cur == value {
		return nil
	}
	var err error
	if value == "" {
		err = gate.EraseKeys(ctx, c.OneGate, key)
	} else {
		err = c.OneGate.UpdateVM(ctx, onegate.KV{Key: key, Value: value})
	}
	if err != nil {
		return err
	}
	*cur = value
	return nil
}

// limit keeps a published message within what the failure report uses,
// without characters OneGate refuses.
func limit(s string) string {
	s = strings.NewReplacer(`"`, "'", ",", ";", "[", "(", "]", ")", "\\", "/", "\n", " ").Replace(s)
	if len(s) > 240 {
		s = s[:240]
	}
	return s
}
