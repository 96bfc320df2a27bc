package flow

// checkMasterCount applies etcd's quorum rule to the master count: every
// master runs an etcd member, and etcd stays writable while more than half
// of its members are up, so an even count tolerates no more failures than
// the odd count below it (4 survive 1 loss, as 3 do) while adding one more
// member to fail. 1 to 7: etcd's own guidance stops at 7 members, beyond
// which each write waits on more replicas for no gain.
func checkMasterCount(ps *problems, path string, n int) {
	switch {
	case n < 1:
		ps.errorf(path, "%d masters: the control plane needs at least 1 (3 or 5 for high availability)", n)
	case n > MaxMasters:
		ps.errorf(path, "%d masters: at most %d (etcd members)", n, MaxMasters)
	case n%2 == 0:
		ps.errorf(path, "%d masters: etcd keeps quorum while a majority of its members is up, so %d masters survive no more failures than %d; use an odd number (1, 3, 5 or 7)", n, n, n-1)
	case n == 1:
		ps.warnf(path, "1 master: the control plane is not highly available (losing that VM stops the API); use 3 or 5 masters for HA")
	}
}
