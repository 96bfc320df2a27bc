package status

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// maxListed is how many VM IDs a reason names before "…".
const maxListed = 10

// Outcome is the one-word answer of a report.
type Outcome string

const (
	// Ready: the service is RUNNING and every VM has READY=YES.
	Ready Outcome = "ready"
	// InProgress: nothing failed yet, but something is not ready.
	InProgress Outcome = "in-progress"
	// Failed: the service, a role or a VM failed, or the service is
	// undeploying or gone; waiting longer will not help.
	Failed Outcome = "failed"
)

// Report is a service's status, ready to render.
type Report struct {
	ServiceID    int
	ServiceName  string
	ServiceState string
	Roles        []RoleStatus
	VMs          []Row // by role name, then VM ID
	Outcome      Outcome
	// Reasons says why the outcome is not Ready, one short line each.
	Reasons []string
	// ControlPlane is the HA control plane as the masters published it;
	// nil when none did.
	ControlPlane *ControlPlaneReport
	// Cluster is what the masters' serve published; nil before it runs.
	Cluster *Cluster
	// NotRead counts the VMs a deadline left unread (NotReadDeadline).
	NotRead int
}

// RoleStatus is a role's line of the report.
type RoleStatus struct {
	Name        string
	State       string
	Cardinality int
	VMs         int // VMs OneFlow lists for the role
}

// Row is one VM of a role.
type Row struct {
	Role string
	VM
}

// ReadyVMs counts the rows with READY=YES.
func (r Report) ReadyVMs() int {
	n := 0
	for _, v := range r.VMs {
		if v.Ready {
			n++
		}
	}
	return n
}

// Summarize joins a service with the VMs read from oned (by ID; a VM
// missing from vms gets a row saying so) and decides the outcome, judging
// certificate expiry at Now().
func Summarize(svc Service, vms map[int]VM) Report {
	return SummarizeAt(svc, vms, Now())
}

// SummarizeAt is Summarize with certificate expiry judged at now.
func SummarizeAt(svc Service, vms map[int]VM, now time.Time) Report {
	r := Report{ServiceID: svc.ID, ServiceName: svc.Name, ServiceState: ServiceStateName(svc.State)}
	var failed, pending []string
	var notRead []string
	switch {
	case failedState(r.ServiceState), goneState(r.ServiceState):
		failed = append(failed, fmt.Sprintf("service is %s", r.ServiceState))
	case r.ServiceState != "RUNNING":
		pending = append(pending, fmt.Sprintf("service is %s", r.ServiceState))
	}
	roles := append([]Role(nil), svc.Roles...)
	sort.SliceStable(roles, func(i, j int) bool { return roles[i].Name < roles[j].Name })
	for _, role := range roles {
		rs := RoleStatus{Name: role.Name, State: RoleStateName(role.State), Cardinality: role.Cardinality, VMs: len(role.VMIDs)}
		r.Roles = append(r.Roles, rs)
		if failedState(rs.State) {
			failed = append(failed, fmt.Sprintf("role %s is %s", rs.Name, rs.State))
		}
		if rs.VMs < rs.Cardinality {
			pending = append(pending, fmt.Sprintf("role %s has %d of %d VMs", rs.Name, rs.VMs, rs.Cardinality))
		}
		ids := append([]int(nil), role.VMIDs...)
		sort.Ints(ids)
		for _, id := range ids {
			vm, ok := vms[id]
			if !ok {
				vm = VM{ID: id, ReadError: "not read"}
			}
			vm.ID = id
			r.VMs = append(r.VMs, Row{Role: role.Name, VM: vm})
			switch {
			case vm.ReadError == NotReadDeadline:
				notRead = append(notRead, strconv.Itoa(id))
			case vm.ReadError != "":
				pending = append(pending, fmt.Sprintf("VM %d: unreadable", id))
			case vm.Phase == PhaseFailed:
				failed = append(failed, fmt.Sprintf("VM %d (%s): agent failed: %s", id, role.Name, orDash(vm.Error)))
			case vmFailed(vm.State, vm.LCMState):
				failed = append(failed, fmt.Sprintf("VM %d (%s) is %s", id, role.Name, vmState(vm)))
			case !vm.Ready:
				pending = append(pending, fmt.Sprintf("VM %d (%s): %s", id, role.Name, progressOf(vm)))
			}
		}
	}
	if len(r.VMs) == 0 {
		pending = append(pending, "no VMs yet")
	}
	if r.NotRead = len(notRead); r.NotRead > 0 {
		// One line, not one per VM: a deadline may leave thousands.
		if len(notRead) > maxListed {
			notRead = append(notRead[:maxListed], "…")
		}
		pending = append(pending, fmt.Sprintf("%d VMs not read before the deadline: VM %s", r.NotRead, strings.Join(notRead, ", ")))
	}
	r.ControlPlane = controlPlane(r.VMs)
	if cp := r.ControlPlane; cp != nil && cp.Quorum != nil && (cp.Quorum.Lost || cp.Quorum.InDoubt) {
		failed = append(failed, cp.Quorum.reason())
	}
	r.Cluster = clusterOf(r.VMs)
	failed = append(failed, certsReasons(r.VMs, now)...)
	uf, up := upgradeReasons(r.VMs)
	failed, pending = append(failed, uf...), append(pending, up...)
	switch {
	case len(failed) > 0:
		r.Outcome, r.Reasons = Failed, failed
	case len(pending) > 0:
		r.Outcome, r.Reasons = InProgress, pending
	default:
		r.Outcome = Ready
	}
	return r
}

// vmState is the state a person wants to see: the LCM state while ACTIVE,
// else the VM state (POWEROFF, PENDING, ...).
func vmState(v VM) string {
	if v.State == "ACTIVE" && v.LCMState != "" {
		return v.LCMState
	}
	return v.State
}

// progressOf says how far a VM that is not ready has got.
func progressOf(v VM) string {
	if v.Phase == "" {
		return vmState(v) + ", no agent phase yet"
	}
	return "phase " + v.Phase
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
