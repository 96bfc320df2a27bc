package testbed

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// memSampler sums the resident memory of every process in the watched PID
// namespaces, plus this process, and keeps the peak.
type memSampler struct {
	mu    sync.Mutex
	ns    map[string]bool // PID namespace links ("pid:[4026...]") being watched
	max   int64
	quit  chan struct{}
	done  chan struct{}
	pidNS map[int]string
}

func startMemSampler(_ *Bed) *memSampler {
	m := &memSampler{ns: map[string]bool{}, pidNS: map[int]string{}, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			m.sample()
			select {
			case <-m.quit:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

func (m *memSampler) watch(pid int) {
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ns[link], m.pidNS[pid] = true, link
}

func (m *memSampler) unwatch(pid int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.ns, m.pidNS[pid])
	delete(m.pidNS, pid)
}

func (m *memSampler) sample() {
	m.mu.Lock()
	watched := make(map[string]bool, len(m.ns))
	for k := range m.ns {
		watched[k] = true
	}
	m.mu.Unlock()
	total := rss(os.Getpid())
	if len(watched) > 0 {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil && watched[link] {
				total += rss(pid)
			}
		}
	}
	m.mu.Lock()
	m.max = max(m.max, total)
	m.mu.Unlock()
}

func (m *memSampler) peak() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.max
}

func (m *memSampler) stop() {
	select {
	case <-m.quit:
	default:
		close(m.quit)
	}
	<-m.done
}

// rss reads VmRSS (bytes) of a process; 0 if it is gone.
func rss(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kb, _ := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
