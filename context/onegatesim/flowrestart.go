package onegatesim

// RestartFlow is the owner restarting oneflow-server: on start its
// LifeCycleManager hands every RUNNING or WARNING service to the
// watchdog again (ServiceWatchDog#add_service), which checks every node
// as if its state had just changed. A WARNING left by a VM that has
// since gone DONE ends there when every remaining node runs: the way out
// of the sticky WARNING that remediation reports (agent/serve
// scaleVerdict), besides a power cycle.
func (s *Sim) RestartFlow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range sortedIDs(s.services) {
		svc := s.services[id]
		if watched(svc) {
			s.record(EventServiceState, svc.id, -1, "", "oneflow-server restarted: service watched again")
			s.rewatch(svc)
		}
	}
}
