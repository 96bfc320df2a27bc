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
	// Unseen are voters published healthy whose master VM is UNKNOWN now:
	// oned lost sight of its host, but the guest may still run, and its
	// member with it.
	Unseen int
	// Lost: the healthy voters are no majority, even counting the unseen
	// ones. etcd then commits nothing (no API writes, no leader lease, no
	// member change).
	Lost bool
	// InDoubt: a majority only with the unseen voters; status cannot tell.
	InDoubt bool
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
		if m.State == "voter" && m.VM != 0 {
			switch vmLCM(rows, m.VM) {
			case "RUNNING":
				q.Healthy++
			case "UNKNOWN":
				q.Unseen++
			}
		}
	}
	short := q.Voters > 0 && q.Healthy*2 <= q.Voters
	q.Lost = short && (q.Healthy+q.Unseen)*2 <= q.Voters
	q.InDoubt = short && !q.Lost
	return q
}

// vmLCM is the LCM state of master VM id when it is ACTIVE and read, else "".
func vmLCM(rows []Row, id int) string {
	for _, r := range rows {
		if r.ID == id && r.ReadError == "" && r.State == "ACTIVE" {
			return r.LCMState
		}
	}
	return ""
}

// reason is the line Summarize adds to a report's reasons.
func (q *EtcdQuorum) reason() string {
	if q.InDoubt {
		return fmt.Sprintf("etcd quorum in doubt: %d of %d voting members on RUNNING masters, %d more on UNKNOWN ones (oned cannot see their hosts; if they are lost, so is quorum)",
			q.Healthy, q.Voters, q.Unseen)
	}
	return fmt.Sprintf("etcd has lost quorum: %d of %d voting members healthy; %s", q.Healthy, q.Voters, WayBack)
}
