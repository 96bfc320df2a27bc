package status

import (
	"encoding/json"
	"io"
)

// JSONVersion is the version of the --json document below; it changes only
// when a field is removed or changes meaning (new fields may appear).
const JSONVersion = 1

// jsonReport is the --json document:
//
//	{"version":1,
//	 "service":{"id":12,"name":"k8s","state":"RUNNING"},
//	 "outcome":"ready"|"in-progress"|"failed",
//	 "reasons":["VM 50 (worker): wait-master", ...],
//	 "roles":[{"name":"master","state":"RUNNING","cardinality":1,"vms":1}],
//	 "vms":[{"role":"master","id":49,"name":"master_0_(service_12)",
//	         "state":"ACTIVE","lcm_state":"RUNNING","ip":"10.0.0.5",
//	         "phase":"done","ready":true,"node":"k8s-master",
//	         "error":"","master":"10.0.0.5:6443","token_published":true,
//	         "read_error":""}]}
//
// The join token itself is never part of it: only token_published. Every
// text a VM gave is masked and at most MaxValue bytes (redact.go).
type jsonReport struct {
	Version int          `json:"version"`
	Service jsonService  `json:"service"`
	Outcome Outcome      `json:"outcome"`
	Reasons []string     `json:"reasons"`
	Roles   []jsonRole   `json:"roles"`
	VMs     []jsonVMView `json:"vms"`
	// ControlPlane appears once a master published HA fields:
	// {"endpoint":"127.0.0.1:6444","initialised_by":49,"acting_vm":53,
	//  "etcd":[{"peer_ip":"10.0.0.5","state":"voter","vm":49}],"etcd_error":""}
	ControlPlane *jsonControlPlane `json:"control_plane,omitempty"`
	// Cluster is what the masters' serve published (living.go).
	Cluster *Cluster `json:"cluster,omitempty"`
	// NotRead counts the VMs the deadline left unread; their rows say
	// "not read: the deadline passed" in read_error.
	NotRead int `json:"not_read,omitempty"`
}

type jsonControlPlane struct {
	Endpoint      string       `json:"endpoint"`
	InitialisedBy int          `json:"initialised_by"`
	ActingVM      int          `json:"acting_vm"`
	Etcd          []jsonMember `json:"etcd"`
	EtcdError     string       `json:"etcd_error"`
	// EtcdQuorum is absent without a member list (quorum.go).
	EtcdQuorum *jsonQuorum `json:"etcd_quorum,omitempty"`
}

type jsonQuorum struct {
	Voters  int    `json:"voters"`
	Healthy int    `json:"healthy"`
	Lost    bool   `json:"lost"`
	Unseen  int    `json:"unseen,omitempty"`
	InDoubt bool   `json:"in_doubt,omitempty"`
	WayBack string `json:"way_back,omitempty"`
}

type jsonMember struct {
	PeerIP string `json:"peer_ip"`
	State  string `json:"state"`
	VM     int    `json:"vm"`
}

type jsonService struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"`
}

type jsonRole struct {
	Name        string `json:"name"`
	State       string `json:"state"`
	Cardinality int    `json:"cardinality"`
	VMs         int    `json:"vms"`
}

type jsonVMView struct {
	Role           string `json:"role"`
	ID             int    `json:"id"`
	Name           string `json:"name"`
	State          string `json:"state"`
	LCMState       string `json:"lcm_state"`
	IP             string `json:"ip"`
	Phase          string `json:"phase"`
	Ready          bool   `json:"ready"`
	Node           string `json:"node"`
	Error          string `json:"error"`
	Master         string `json:"master"`
	TokenPublished bool   `json:"token_published"`
	ReadError      string `json:"read_error"`
	// Certs and CertsError are a master's ONEGATE_K8S_CERTS and
	// ONEGATE_K8S_CERTS_ERROR.
	Certs      string `json:"certs,omitempty"`
	CertsError string `json:"certs_error,omitempty"`
	// Upgrade fields (upgrade.go), only while a VM published them.
	Upgrade             string `json:"upgrade,omitempty"`
	UpgradeError        string `json:"upgrade_error,omitempty"`
	UpgradeRollout      string `json:"upgrade_rollout,omitempty"`
	UpgradeRolloutError string `json:"upgrade_rollout_error,omitempty"`
}

// WriteJSON prints the report as the documented, indented JSON document.
// Empty lists are [] rather than null so consumers need no special case.
func WriteJSON(w io.Writer, r Report) error {
	out := jsonReport{
		Version: JSONVersion,
		Service: jsonService{ID: r.ServiceID, Name: r.ServiceName, State: r.ServiceState},
		Outcome: r.Outcome,
		Reasons: append([]string{}, r.Reasons...),
		Roles:   []jsonRole{},
		VMs:     []jsonVMView{},
		Cluster: r.Cluster,
		NotRead: r.NotRead,
	}
	for _, ro := range r.Roles {
		out.Roles = append(out.Roles, jsonRole(ro))
	}
	for _, v := range r.VMs {
		out.VMs = append(out.VMs, jsonVMView{
			Role: v.Role, ID: v.ID, Name: v.Name, State: v.State, LCMState: v.LCMState, IP: v.IP,
			Phase: v.Phase, Ready: v.Ready, Node: v.NodeName, Error: v.Error, Master: v.Master,
			TokenPublished: v.TokenPublished, ReadError: v.ReadError, Certs: v.CP.Certs, CertsError: v.CP.CertsError,
			Upgrade: v.Upgrade.Node, UpgradeError: v.Upgrade.NodeError, UpgradeRollout: v.Upgrade.Rollout, UpgradeRolloutError: v.Upgrade.RolloutError,
		})
	}
	if cp := r.ControlPlane; cp != nil {
		out.ControlPlane = &jsonControlPlane{Endpoint: cp.Endpoint, InitialisedBy: cp.InitialisedBy, ActingVM: cp.ActingVM, Etcd: []jsonMember{}, EtcdError: cp.EtcdError}
		for _, m := range cp.Members {
			out.ControlPlane.Etcd = append(out.ControlPlane.Etcd, jsonMember(m))
		}
		if q := cp.Quorum; q != nil {
			out.ControlPlane.EtcdQuorum = &jsonQuorum{Voters: q.Voters, Healthy: q.Healthy, Lost: q.Lost, Unseen: q.Unseen, InDoubt: q.InDoubt}
			if q.Lost {
				out.ControlPlane.EtcdQuorum.WayBack = WayBack
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
