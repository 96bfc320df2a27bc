package onegatesim

// OnVMCreated registers f to be called for every VM created from now on, in
// creation order, from one goroutine of the simulator: the moment OneFlow
// would boot the VM, so a test can start an agent for it. f must not block
// for long; it may call the simulator.
func (s *Sim) OnVMCreated(f func(VMInfo)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, f)
}

// queueCreated hands a new VM to the notifier. Callers hold s.mu.
func (s *Sim) queueCreated(v VMInfo) {
	s.notifyQ = append(s.notifyQ, v)
	s.notifyCond.Signal()
}

// notifier delivers creation notices outside the lock, so a callback that
// calls back into the simulator cannot deadlock a request handler.
func (s *Sim) notifier() {
	defer close(s.notifierDone)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.notifyQ) == 0 && !s.closed {
			s.notifyCond.Wait()
		}
		if len(s.notifyQ) == 0 {
			return
		}
		v := s.notifyQ[0]
		s.notifyQ = s.notifyQ[1:]
		hooks := append([]func(VMInfo){}, s.hooks...)
		s.mu.Unlock()
		for _, f := range hooks {
			f(v)
		}
		s.mu.Lock()
	}
}
