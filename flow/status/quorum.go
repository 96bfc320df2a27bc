package status

import "fmt"

// EtcdQuorum is etcd's voting majority as status judges it, from the
// members a master published (ONEGATE_K8S_ETCD) and the master VMs' states
// now. A member counts as healthy only when it was published healthy
// ("voter") and its master VM is RUNNING now: a publication may predate
// the loss (without quorum no master acts, so none publishes again), while
// oned's VM state is current. A member of no master VM (stale), a learner
// and an unstarted member do not make the count better: learners do not
// vote; stale and unstarted members vote but never answer.
type EtcdQuorum struct {
	Voters, Healthy int
	// Lost: the healthy voters are no majority. etcd then commits nothing
	// (no API writes, no leader lease, no member change).
	Lost bool
}

// WayBack is what status tells an operator whose etcd lost quorum.
const WayBack = "if the lost masters' disks are intact, start their VMs again (onevm resume); " +
	"otherwise restore etcd from a snapshot on one master (etcdutl snapshot restore, then a single-member cluster), " +
	"or give up the cluster's data: `onekube-agent bootstrap --new-cluster` on a fresh master makes a new, empty cluster " +
	"(docs/onekubed.md, \"Losing etcd quorum\")"

// quorumOf judges cp's members against the master rows; nil when no
// member list was published.
func quorumOf(cp *ControlPlaneReport, rows []Row) *EtcdQuorum {
	if len(cp.Members) == 0 {
		return nil
	}
	q := &EtcdQuorum{}
	for _, m := range cp.Members {
		if m.State == "learner" {
			continue
		}
		q.Voters++
		if m.State == "voter" && m.VM != 0 && vmRunning(rows, m.VM) {
			q.Healthy++
		}
	}
	q.Lost = q.Voters > 0 && q.Healthy*2 <= q.Voters
	return q
}

func vmRunning(rows []Row, id int) bool {
	for _, r := range rows {
		if r.ID == id {
			return r.ReadError == "" && r.State == "ACTIVE" && r.LCMState == "RUNNING"
		}
	}
	return false
}

// reason is the line Summarize adds to a report's reasons.
func (q *EtcdQuorum) reason() string {
	return fmt.Sprintf("etcd has lost quorum: %d of %d voting members healthy; %s", q.Healthy, q.Voters, WayBack)
}
