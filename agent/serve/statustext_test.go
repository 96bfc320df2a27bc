package serve

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The status shows who acts, the token's expiry, the waiting VMs and the
// Nodes without a VM, read back from the status file as serve writes it.
func TestStatusText(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "serve.json")
	b := NewStatusBoard(path)
	b.setActing(true, "master-10")
	b.tickEnded("tokens", now, nil, TokensReport{Waiting: []int{11, 12}, NotWaiting: map[string]string{"13": "published PHASE=failed"}, TokenExpires: now.Add(40 * time.Minute), Tokens: 1})
	b.tickEnded("publish", now, nil, PublishReport{Published: true, Expires: now.Add(40 * time.Minute).Format(time.RFC3339), JoinDataRestored: 2})
	b.tickEnded("cleanup", now, nil, CleanupReport{NodesWithoutVM: map[string]time.Time{"worker-14": now.Add(-time.Minute)}, Refused: map[string]string{"master-15": "etcd member not removed: quorum"}})
	b.tickEnded("certs", now, nil, CertsReport{Earliest: now.Add(72 * time.Hour), EarliestFile: "/etc/kubernetes/pki/apiserver.crt", RenewBefore: "720h0m0s", State: "wait", Error: "kubeadm certs renew all: exit status 1"})
	if err := b.Flush(now); err != nil {
		t.Fatal(err)
	}
	st, err := ReadStatus(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := st.WriteText(&out, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"serve:            acting for the cluster (master-10)",
		"join token:       expires 2026-11-22T12:40:00Z (in 40m0s)",
		"waiting VMs:      11, 12",
		"join data:        restored 2 keys rewritten by a sibling VM or by hand (see serve's log)",
		"not waiting:    VM 13: published PHASE=failed",
		"nodes without VM: worker-14 (VM gone since 2026-11-22T11:59:00Z)",
		"refused:        master-15: etcd member not removed: quorum",
		"certificates:     expires 2026-11-25T12:00:00Z (in 72h0m0s) (/etc/kubernetes/pki/apiserver.crt), renewed never, renew 720h0m0s before, wait",
		"CANNOT RENEW:   kubeadm certs renew all: exit status 1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}

	// A standby master shows the acting one and the token as it mirrors it.
	sb := NewStatusBoard("")
	sb.setLeader("master-10")
	sb.tickEnded("publish", now, nil, PublishReport{})
	s2 := sb.Snapshot()
	out.Reset()
	_ = s2.WriteText(&out, now)
	if !strings.Contains(out.String(), "standby; master-10 acts") || !strings.Contains(out.String(), "none (nobody waits)") || strings.Contains(out.String(), "join data") {
		t.Errorf("standby:\n%s", out.String())
	}
}
