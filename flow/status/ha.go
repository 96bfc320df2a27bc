package status

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// ControlPlaneInfo is what a master publishes about the HA control plane
// (docs/architecture.md §3).
type ControlPlaneInfo struct {
	Kind      string // ONEGATE_K8S_KIND: init or control-plane
	Endpoint  string // ONEGATE_K8S_ENDPOINT: the controlPlaneEndpoint
	Etcd      string // ONEGATE_K8S_ETCD: "<state>@<peer IP> ..." as the acting master saw it
	EtcdError string // ONEGATE_K8S_ETCD_ERROR
	Serve     string // ONEGATE_K8S_SERVE: acting or standby
	Exposure  string // ONEGATE_K8S_EXPOSURE: the master's OneGate probe (exposure.go)
	// Certs is ONEGATE_K8S_CERTS, "expires=<RFC 3339> renewed=<RFC 3339|never>",
	// and CertsError why the master could not renew (docs/certificates.md).
	Certs, CertsError string
}

func readControlPlane(get func(string) string) ControlPlaneInfo {
	return ControlPlaneInfo{
		Kind:       get(vmcontext.KeyPubKind),
		Endpoint:   get(vmcontext.KeyPubEndpoint),
		Etcd:       get(vmcontext.KeyPubEtcd),
		EtcdError:  get(vmcontext.KeyPubEtcdError),
		Serve:      get(vmcontext.KeyPubServe),
		Exposure:   get(vmcontext.KeyPubExposure),
		Certs:      get(vmcontext.KeyPubCerts),
		CertsError: get(vmcontext.KeyPubCertsError),
	}
}

// ControlPlaneReport is the HA part of a report: the endpoint, who
// initialised, and etcd's members matched to the master VMs.
type ControlPlaneReport struct {
	Endpoint      string
	InitialisedBy int // VM ID, 0 when no master says so (the initialiser was recreated)
	// Members are etcd's members, from the acting master (else any master
	// that published them), each matched to a master VM by address.
	Members   []Member
	EtcdError string
	// ActingVM published the members (0: none acts).
	ActingVM int
	// Quorum judges the members against the VMs' states (quorum.go); nil
	// without a member list.
	Quorum *EtcdQuorum
}

// Member is one etcd member.
type Member struct {
	PeerIP string
	State  string // voter, learner, unstarted, unhealthy
	VM     int    // the master VM with that address, 0 for none (a stale member)
}

// controlPlane builds the HA part from the master rows (those that
// published a kind or a master address, whatever the role is called); nil
// when no master published any of it (an older agent).
func controlPlane(rows []Row) *ControlPlaneReport {
	var masters []Row
	for _, r := range rows {
		if r.ReadError == "" && (r.CP.Kind != "" || r.Master != "") {
			masters = append(masters, r)
		}
	}
	cp := &ControlPlaneReport{}
	var source *Row
	seen := false
	for i := range masters {
		m := &masters[i]
		c := m.CP
		if c != (ControlPlaneInfo{}) {
			seen = true
		}
		if c.Kind == "init" && cp.InitialisedBy == 0 {
			cp.InitialisedBy = m.ID
		}
		if cp.Endpoint == "" {
			cp.Endpoint = c.Endpoint
		}
		if c.Etcd != "" && (source == nil || c.Serve == "acting" && source.CP.Serve != "acting") {
			source = m
		}
	}
	if !seen {
		return nil
	}
	if source != nil {
		cp.EtcdError = source.CP.EtcdError
		if source.CP.Serve == "acting" {
			cp.ActingVM = source.ID
		}
		for _, f := range strings.Fields(source.CP.Etcd) {
			state, ip, ok := strings.Cut(f, "@")
			if !ok {
				continue
			}
			cp.Members = append(cp.Members, Member{PeerIP: ip, State: state, VM: masterAt(masters, ip)})
		}
		sort.SliceStable(cp.Members, func(i, j int) bool { return cp.Members[i].VM < cp.Members[j].VM })
	}
	cp.Quorum = quorumOf(cp, masters)
	return cp
}

// masterAt is the master whose Kubernetes address (ONEGATE_K8S_MASTER, else
// its first NIC) is ip.
func masterAt(masters []Row, ip string) int {
	want, err := netip.ParseAddr(ip)
	if err != nil {
		return 0
	}
	for _, m := range masters {
		addr := m.IP
		if m.Master != "" {
			if ap, err := netip.ParseAddrPort(m.Master); err == nil {
				addr = ap.Addr().String()
			} else {
				addr = m.Master
			}
		}
		if a, err := netip.ParseAddr(addr); err == nil && a == want {
			return m.ID
		}
	}
	return 0
}

// memberOf is the etcd state of a master VM, "-" when etcd does not list it.
func (cp *ControlPlaneReport) memberOf(vm int) string {
	for _, m := range cp.Members {
		if m.VM == vm {
			return m.State
		}
	}
	if len(cp.Members) == 0 {
		return "?"
	}
	return "not a member"
}

// writeControlPlane is the table's HA block.
func writeControlPlane(b *strings.Builder, r Report) {
	cp := r.ControlPlane
	if cp == nil {
		return
	}
	ep := cell(cp.Endpoint)
	if cp.Endpoint == vmcontext.LocalBalancer {
		ep += " (the local balancer on every node)"
	}
	init := "no master (the initialiser rejoined since)"
	if cp.InitialisedBy != 0 {
		init = fmt.Sprintf("VM %d", cp.InitialisedBy)
	}
	fmt.Fprintf(b, "control plane: endpoint %s, initialised by %s\n", ep, init)
	for _, v := range r.VMs {
		if v.CP.Kind == "" && v.CP.Endpoint == "" {
			continue
		}
		certs := ""
		if v.CP.Certs != "" {
			certs = ", certificates " + cell(v.CP.Certs)
		}
		fmt.Fprintf(b, "  VM %d %s: %s, etcd %s%s\n", v.ID, cell(v.NodeName), cell(v.CP.Kind), cell(cp.memberOf(v.ID)), certs)
		if v.CP.CertsError != "" {
			fmt.Fprintf(b, "  VM %d CANNOT RENEW ITS CERTIFICATES: %s\n", v.ID, truncate(cell(v.CP.CertsError), 2*maxError))
		}
	}
	for _, m := range cp.Members {
		if m.VM == 0 {
			fmt.Fprintf(b, "  etcd member at %s (%s) belongs to no master VM: stale\n", cell(m.PeerIP), cell(m.State))
		}
	}
	if cp.EtcdError != "" {
		fmt.Fprintf(b, "  etcd: %s\n", truncate(cell(cp.EtcdError), 2*maxError))
	}
	if q := cp.Quorum; q != nil && q.Lost {
		fmt.Fprintf(b, "  ETCD HAS LOST QUORUM: %d of %d voting members healthy; the control plane can change nothing\n", q.Healthy, q.Voters)
		fmt.Fprintf(b, "  way back: %s\n", WayBack)
	}
	if q := cp.Quorum; q != nil && q.InDoubt {
		fmt.Fprintf(b, "  ETCD QUORUM IN DOUBT: %d of %d voting members on RUNNING masters, %d on UNKNOWN ones (oned cannot see their hosts)\n", q.Healthy, q.Voters, q.Unseen)
	}
}
