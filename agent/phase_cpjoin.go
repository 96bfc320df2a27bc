package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"filippo.io/age"

	"github.com/onekube/onekube/agent/certgrant"
	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// IdentityFile holds a joining master's age identity, the private half of
// the recipient it publishes: 0600 in the 0700 state directory, a new one
// for every attempt, removed once joined.
const IdentityFile = "/var/lib/onekube/cp-join.agekey"

// cpKeys are what a master published in an earlier bootstrap (a recreated
// master's old USER_TEMPLATE), cleared before it asks to join again.
var cpKeys = append(append([]string{}, joinKeys...), vmcontext.KeyPubRecipient)

// waitTurn waits until a cluster is published (some master READY with a CA
// hash) and every master with a lower VM ID is READY or failed: etcd grows
// one member at a time, so masters join in VM-ID order. It stops at once
// when no cluster exists and the lowest master, the initialiser, failed.
func waitTurn(ctx context.Context, d Data) error {
	n, t := d.Node(), d.Settings()
	w := &waiter{
		what:    "waiting for this master's turn to join",
		timeout: t.MasterTimeout,
		expired: fmt.Errorf("%w (master VMs %s)", ErrMasterTimeout, idList(n.MasterIDs)),
		initial: t.PollInterval,
		max:     t.MaxPollInterval,
		clock:   d.Clock(),
		log:     d.Log(),
	}
	lastRead := d.Clock().Now()
	err := w.run(ctx, func(ctx context.Context) error {
		if d.Clock().Now().Sub(lastRead) >= serviceRefresh {
			refreshMasters(ctx, d)
			lastRead = d.Clock().Now()
		}
		var why []string
		var ready *onegate.VM
		lowestFailed := ""
		for _, id := range n.MasterIDs {
			if id == n.VMID {
				continue
			}
			vm, err := d.OneGate().GetVMByID(ctx, id)
			if errors.Is(err, ErrUnauthorized) {
				return err
			}
			if err != nil {
				why = append(why, fmt.Sprintf("VM %d: %v", id, err))
				if id < n.VMID {
					return Retryable(errors.New(strings.Join(why, "; ")))
				}
				continue
			}
			hash := publishedHash(vm)
			if hash != "" && (ready == nil || vm.ID < ready.ID) {
				ready = vm
			}
			switch {
			case id > n.VMID, hash != "":
			case failed(vm):
				if id == n.MasterIDs[0] {
					lowestFailed = quoteReport(vm.UserTemplate[vmcontext.KeyPubError])
				}
			default:
				why = append(why, fmt.Sprintf("VM %d (lower ID) is not READY yet", id))
			}
		}
		if ready == nil {
			if lowestFailed != "" {
				return fmt.Errorf("%w: VM %d, which initialises the cluster, reported %s=%s: %s", ErrMasterFailed, n.MasterIDs[0], vmcontext.KeyPubPhase, PhaseFailed, lowestFailed)
			}
			why = append(why, "no master has published a cluster yet")
		}
		if len(why) > 0 {
			return Retryable(errors.New(strings.Join(why, "; ")))
		}
		m := d.Master()
		m.VMID, m.Hash = ready.ID, publishedHash(ready)
		m.Endpoint = strings.TrimSpace(ready.UserTemplate[vmcontext.KeyPubEndpoint])
		return nil
	})
	if err != nil {
		return err
	}
	d.Log().Info("this master's turn to join", "cluster_from_vm", d.Master().VMID, "attempts", w.attempts)
	return nil
}

// requestCertKey prepares a clean attempt and asks for the certificate
// key: it undoes an earlier unfinished join of this agent (kubeadm reset),
// clears what an earlier bootstrap of this VM published (a recreated
// master's READY), makes a fresh age identity, and publishes its recipient.
// The acting master takes a new recipient as the sign that this disk is
// clean, removes this VM's stale etcd member, and answers with a grant.
func requestCertKey(ctx context.Context, d Data) error {
	if err := resetIfOwnAttempt(ctx, d, PhaseKubeadmJoin); err != nil {
		return err
	}
	if st := d.State(); st.WasAttempted(PhaseKubeadmJoin) {
		st.ClearAttempt(PhaseKubeadmJoin)
		if err := d.SaveState(); err != nil {
			return err
		}
	}
	if err := clearPublished(ctx, d, cpKeys); err != nil {
		return err
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return fmt.Errorf("making the join identity: %w", err)
	}
	if err := writeSecretFile(d, IdentityFile, []byte(id.String()+"\n")); err != nil {
		return err
	}
	w := oneGateWaiter(d, "publishing this master's recipient")
	if err := w.run(ctx, func(ctx context.Context) error {
		return d.OneGate().UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyPubRecipient, Value: id.Recipient().String()})
	}); err != nil {
		return err
	}
	d.Node().Self.UserTemplate[vmcontext.KeyPubRecipient] = id.Recipient().String()
	return nil
}

// readIdentity reads this attempt's identity.
func readIdentity(d Data) (*age.X25519Identity, error) {
	b, err := d.Root().ReadFile(IdentityFile)
	if err != nil {
		return nil, fmt.Errorf("reading the join identity: %w", err)
	}
	id, err := age.ParseX25519Identity(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", IdentityFile, err)
	}
	return id, nil
}

// waitCertKey waits for a READY master to publish a grant for this VM and
// recipient, and opens it: the certificate key and a bootstrap token. The
// CA hash is the granting master's, which must be the cluster's.
func waitCertKey(ctx context.Context, d Data) error {
	n, t := d.Node(), d.Settings()
	id, err := readIdentity(d)
	if err != nil {
		return err
	}
	me := id.Recipient().String()
	stop, err := presentRecipient(ctx, d, me)
	if err != nil {
		return err
	}
	defer stop()
	w := &waiter{
		what:    "waiting for the certificate key",
		timeout: t.MasterTimeout,
		expired: fmt.Errorf("%w: no acting master granted the certificate key (is onekube-serve running on a READY master?)", ErrMasterTimeout),
		initial: t.PollInterval,
		max:     t.MaxPollInterval,
		clock:   d.Clock(),
		log:     d.Log(),
	}
	judge := &expiryJudge{d: d}
	err = w.run(ctx, func(ctx context.Context) error {
		var why []string
		for _, mid := range n.MasterIDs {
			if mid == n.VMID {
				continue
			}
			vm, err := d.OneGate().GetVMByID(ctx, mid)
			if errors.Is(err, ErrUnauthorized) {
				return err
			}
			if err != nil {
				why = append(why, fmt.Sprintf("VM %d: %v", mid, err))
				continue
			}
			if e := strings.TrimSpace(vm.UserTemplate[vmcontext.KeyPubEtcdError]); e != "" {
				why = append(why, fmt.Sprintf("VM %d reports %s", mid, quoteReport(e)))
			}
			// A sealed grant: opened only with this joiner's private
			// key, after judge checked its master at that VM's NICs.
			raw := strings.TrimSpace(vm.Claim(vmcontext.KeyPubCertKey).Unverified())
			hash := publishedHash(vm)
			if raw == "" || hash == "" {
				continue
			}
			g, err := certgrant.Parse(raw)
			if err != nil || g.VMID != n.VMID || g.Recipient != me {
				continue
			}
			if stale := judge.grant(ctx, vm, g.Expires, hash, d.Config().Port); stale != "" {
				why = append(why, fmt.Sprintf("VM %d's %s", mid, stale))
				continue
			}
			p, err := g.Open(id)
			if err != nil {
				why = append(why, fmt.Sprintf("VM %d's grant: %v", mid, err))
				continue
			}
			m := d.Master()
			m.VMID, m.Hash, m.CertificateKey, m.Token = vm.ID, hash, p.CertificateKey, p.Token
			m.Endpoint = strings.TrimSpace(vm.UserTemplate[vmcontext.KeyPubEndpoint])
			return nil
		}
		why = append(why, "no grant for this VM yet")
		return Retryable(errors.New(strings.Join(why, "; ")))
	})
	if err != nil {
		return err
	}
	d.Log().Info("certificate key granted", "by_vm", d.Master().VMID, "attempts", w.attempts)
	return nil
}

// publishControlPlane reports a joined master: its address, the CA hash
// (checked against this disk), its kind and the endpoint, READY=YES in the
// same update; then it withdraws its recipient and drops the identity.
func publishControlPlane(ctx context.Context, d Data) error {
	cfg, n := d.Config(), d.Node()
	ca, err := d.Root().ReadFile(CACertFile)
	if err != nil {
		return fmt.Errorf("%w: reading the cluster CA: %w", ErrJoinData, err)
	}
	hash, err := kubeadm.CACertHash(ca)
	if err != nil {
		return fmt.Errorf("%w: hashing %s: %w", ErrJoinData, CACertFile, err)
	}
	// After a crash between the join and this publish, the rerun skips
	// the waits and knows no published hash: the CA kubeadm wrote was
	// pinned by that join's discovery, so it is the cluster's.
	if want := d.Master().Hash; want != "" && hash != want {
		return fmt.Errorf("%w: %s does not hash to the cluster's published hash", ErrJoinData, CACertFile)
	}
	if !ownsAddress(n.Self, cfg.Address.String()) {
		return fmt.Errorf("%w: the address %s is not one of this VM's NIC addresses in OneGate", ErrJoinData, cfg.Address)
	}
	kvs := append([]onegate.KV{
		{Key: vmcontext.KeyPubMaster, Value: cfg.Address.String()},
		{Key: vmcontext.KeyPubPort, Value: fmt.Sprint(cfg.Port)},
		{Key: vmcontext.KeyPubHash, Value: hash},
		{Key: vmcontext.KeyPubNodeName, Value: cfg.NodeName},
		{Key: vmcontext.KeyPubKind, Value: string(KindControlPlane)},
		{Key: vmcontext.KeyPubEndpoint, Value: cfg.Endpoint},
	}, exposureKVs(ctx, d)...)
	if err := publish(ctx, d, append(kvs,
		onegate.KV{Key: vmcontext.KeyPubPhase, Value: PhaseDone},
		onegate.KV{Key: vmcontext.KeyReady, Value: "YES"},
	)); err != nil {
		return err
	}
	if _, ok := n.Self.UserTemplate[vmcontext.KeyPubRecipient]; ok {
		if err := EraseKeys(ctx, d.OneGate(), vmcontext.KeyPubRecipient); err != nil {
			d.Log().Warn("withdrawing the recipient failed", "error", err)
		}
	}
	if err := d.Root().Remove(IdentityFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.Log().Warn("removing the join identity failed", "error", err)
	}
	return nil
}
