package onegatesim

import (
	"fmt"
	"time"
)

// SetCreated sets when oned created VM vmid (its STIME): a service
// deployed long ago, in a test that cannot wait hours. A recreate keeps
// STIME (src/vm/VirtualMachine.cc sets it only at allocation), so this is
// also the creation time a recreated VM shows.
func (s *Sim) SetCreated(vmid int, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return fmt.Errorf("VM %d does not exist", vmid)
	}
	v.stime = at
	return nil
}
