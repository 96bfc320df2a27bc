//go:build realbed

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow"
)

// redirectedJoin (must-hold 1, "redirecting another VM's join"; finding
// 3): with nobody waiting to join, the attacker writes its own address
// over the master's ONEGATE_K8S_MASTER and the hash of a CA it made over
// ONEGATE_K8S_HASH (sibling writes), and listens on the API port. A
// worker scaled up now joins the real cluster: the worker takes the
// address only when it is one of the master's NICs as oned reports them,
// and serve's publish loop puts the join data back with the token it
// shows for the worker. No connection reaches the attacker.
func (h *hostileHA) redirectedJoin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	master := h.masters[0]
	// A token still shown (the first worker's) would have serve check
	// within 10 s, before the new worker comes: wait until serve erased
	// it, so that the forged data stands until a join needs it.
	waitUntil(t, 2*time.Minute, "no join token shown on the master", func() bool {
		return h.s.Sim.UserTemplate(master.ID)[vmcontext.KeyPubToken] == ""
	})
	real := h.s.Sim.UserTemplate(master.ID)
	ports := []string{"6443"}
	if p := real[vmcontext.KeyPubPort]; p != "" && p != "6443" {
		ports = append(ports, p)
	}
	var mu sync.Mutex
	var hits []string
	for _, p := range ports {
		ln, err := h.a.Listen("tcp", ":"+p)
		if err != nil {
			t.Fatalf("the attacker listening on %s: %v", p, err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				hits = append(hits, c.RemoteAddr().String()+" on :"+p)
				mu.Unlock()
				c.Close()
			}
		}()
	}
	attackerIP := h.worker.IP.String()
	forged := attackerCAHash(t)
	if err := h.a.Put(ctx, master.ID, vmcontext.KeyPubMaster+"="+attackerIP+"\n"+vmcontext.KeyPubHash+"="+forged, 1); err != nil {
		t.Fatal(err)
	}
	if ut := h.s.Sim.UserTemplate(master.ID); ut[vmcontext.KeyPubMaster] != attackerIP || ut[vmcontext.KeyPubHash] != forged {
		t.Fatalf("the sibling write did not take: MASTER=%q HASH=%q", ut[vmcontext.KeyPubMaster], ut[vmcontext.KeyPubHash])
	}
	start := time.Now()
	before := len(h.s.Runs())
	workers := len(h.s.Sim.RoleVMs(h.s.ID, flow.RoleWorker))
	if err := h.s.Sim.Scale(h.s.ID, flow.RoleWorker, workers+1); err != nil {
		t.Fatal(err)
	}
	var newID int
	waitUntil(t, time.Minute, "the new worker VM", func() bool {
		for _, vm := range h.s.Sim.RoleVMs(h.s.ID, flow.RoleWorker) {
			if vm.ID != h.worker.ID {
				newID = vm.ID
				return true
			}
		}
		return false
	})
	runs := waitAgents(t, h.s, before+1)
	var out string
	for _, r := range runs {
		if r.VM.ID != newID {
			continue
		}
		out = r.Output()
		if r.Code != 0 {
			t.Fatalf("the new worker %d: exit %d:\n%s", newID, r.Code, lastLines(out, 30))
		}
	}
	t.Logf("the new worker %d joined %s after the scale", newID, time.Since(start).Round(100*time.Millisecond))

	ut := h.s.Sim.UserTemplate(master.ID)
	if ut[vmcontext.KeyPubMaster] != real[vmcontext.KeyPubMaster] || ut[vmcontext.KeyPubHash] != real[vmcontext.KeyPubHash] {
		t.Errorf("the master's join data was not restored: MASTER=%q HASH=%q, want %q %q",
			ut[vmcontext.KeyPubMaster], ut[vmcontext.KeyPubHash], real[vmcontext.KeyPubMaster], real[vmcontext.KeyPubHash])
	}
	serveLog := h.s.Daemon(master.ID, "serve")
	if !strings.Contains(serveLog, "join data in OneGate was rewritten") || !strings.Contains(serveLog, attackerIP) {
		t.Errorf("serve did not warn of the rewrite naming %s:\n%s", attackerIP, lastLines(serveLog, 30))
	}
	// The worker saw the forged address only if it looked before serve's
	// repair (serve may mint and repair as soon as the VM runs); then it
	// must have named and rejected it.
	saw := false
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, attackerIP) {
			saw = true
			t.Logf("the new worker saw the forgery: %s", strings.TrimSpace(line))
			if !strings.Contains(line, "not one of that VM's NIC addresses") && !strings.Contains(line, "is not an address of VM") {
				t.Errorf("the new worker names the attacker's address without rejecting it: %s", line)
			}
		}
	}
	if !saw {
		t.Logf("the new worker never saw the forged address: serve restored it first")
	}
	if e := h.s.Sim.UserTemplate(newID)[vmcontext.KeyPubError]; e != "" {
		t.Errorf("the joined worker still shows %s=%q", vmcontext.KeyPubError, e)
	}
	name := h.s.Sim.UserTemplate(newID)[vmcontext.KeyPubNodeName]
	var ip string
	for _, vm := range h.s.Sim.VMs() {
		if vm.ID == newID {
			ip = vm.IP.String()
		}
	}
	// The admin client trusts the real CA: the Node is in the real
	// cluster.
	waitReady(t, adminClient(t, h.b, h.s.VM(master.ID)), map[string]string{name: ip})
	mu.Lock()
	if len(hits) > 0 {
		t.Errorf("the join was redirected: connections reached the attacker: %v", hits)
	}
	mu.Unlock()
	// The next step scales the masters: OneFlow refuses during the
	// scale's cooldown.
	waitUntil(t, time.Minute, "the service RUNNING after the scale's cooldown", func() bool { return h.s.Sim.ServiceState(h.s.ID) == "RUNNING" })
}

// attackerCAHash is the discovery hash of a CA the attacker made.
func attackerCAHash(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	h, err := kubeadm.CACertHash(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
