package onegatesim

import "maps"

// Stats counts the requests that claimed one VM (by X-ONEGATE-VMID), whether
// or not they were authorised.
type Stats struct {
	Requests map[string]int // by route pattern, e.g. "GET /vms/:id"
	Status   map[int]int    // by response status
	Total    int
	BytesOut int64 // response body bytes
}

// UnknownVM is the Stats key for requests without a usable VM ID header.
const UnknownVM = -1

func (st *Stats) add(route string, status int, bytes int64) {
	if st.Requests == nil {
		st.Requests, st.Status = map[string]int{}, map[int]int{}
	}
	st.Requests[route]++
	st.Status[status]++
	st.Total++
	st.BytesOut += bytes
}

func (st Stats) clone() Stats {
	st.Requests = maps.Clone(st.Requests)
	st.Status = maps.Clone(st.Status)
	if st.Requests == nil {
		st.Requests, st.Status = map[string]int{}, map[int]int{}
	}
	return st
}

// Stats returns the counters of one VM (UnknownVM: requests without a
// parsable VM ID header).
func (s *Sim) Stats(vmid int) Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.stats[vmid]; st != nil {
		return st.clone()
	}
	return Stats{}.clone()
}

// TotalStats sums the counters of every VM and of unknown callers.
func (s *Sim) TotalStats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := Stats{}.clone()
	for _, st := range s.stats {
		for r, n := range st.Requests {
			sum.Requests[r] += n
		}
		for code, n := range st.Status {
			sum.Status[code] += n
		}
		sum.Total += st.Total
		sum.BytesOut += st.BytesOut
	}
	return sum
}

func (s *Sim) count(vmid int, route string, status int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats[vmid]
	if st == nil {
		st = &Stats{}
		s.stats[vmid] = st
	}
	st.add(route, status, bytes)
}
