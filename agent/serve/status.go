package serve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/onekube/onekube/agent/serve/servestatus"
)

// The status file's path and document live in servestatus, which
// `onekube-agent status` reads without linking a Kubernetes client.
const StatusFile = servestatus.StatusFile

type (
	// Status is the document in StatusFile.
	Status = servestatus.Status
	// LoopStatus is one loop's last tick.
	LoopStatus = servestatus.LoopStatus
	// PublishReport is the publish loop's part of the status.
	PublishReport = servestatus.PublishReport
	// TokensReport is the tokens loop's part of the status.
	TokensReport = servestatus.TokensReport
	// CertsReport is the certs loop's part of the status.
	CertsReport = servestatus.CertsReport
	// CleanupReport is the cleanup loop's part of the status.
	CleanupReport = servestatus.CleanupReport
	// RemediateReport is the remediation loop's part of the status.
	RemediateReport = servestatus.RemediateReport
	// RemediateAction is one remediation step in the status.
	RemediateAction = servestatus.RemediateAction
)

// ReadStatus reads a status file written by Flush.
func ReadStatus(path string) (*Status, error) { return servestatus.ReadStatus(path) }

// StatusBoard collects the runner's observations and writes them to a
// file (when path is set).
type StatusBoard struct {
	path string
	mu   sync.Mutex
	st   Status
	// started holds each running tick's start on the monotonic clock: a
	// stuck tick is judged in real elapsed time, whatever the loops' clock
	// says (a virtual clock in tests, a wall clock NTP may step).
	started map[string]time.Time
}

// NewStatusBoard writes to path ("" keeps it in memory only).
func NewStatusBoard(path string) *StatusBoard {
	return &StatusBoard{path: path, st: Status{Loops: map[string]LoopStatus{}}}
}

// Snapshot returns a copy of the current status.
func (b *StatusBoard) Snapshot() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.st
	s.Loops = make(map[string]LoopStatus, len(b.st.Loops))
	for k, v := range b.st.Loops {
		s.Loops[k] = v
	}
	return s
}

// Acting reports whether this master holds the lease now.
func (b *StatusBoard) Acting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st.Acting
}

func (b *StatusBoard) setActing(acting bool, identity string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st.Acting = acting
	if identity != "" {
		b.st.Identity = identity
		b.st.Leader = identity
	}
}

func (b *StatusBoard) setLeader(leader string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st.Leader = leader
}

func (b *StatusBoard) tickStarted(name string, at, mono time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started == nil {
		b.started = map[string]time.Time{}
	}
	b.started[name] = mono
	ls := b.st.Loops[name]
	ls.TickStarted, ls.Running = at, true
	b.st.Loops[name] = ls
}

func (b *StatusBoard) tickEnded(name string, at time.Time, err error, report any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ls := b.st.Loops[name]
	ls.TickEnded, ls.Running, ls.LastError = at, false, ""
	if err != nil {
		ls.LastError = err.Error()
	}
	if report != nil {
		ls.Report = report
	}
	b.st.Loops[name] = ls
}

// stuck names a loop whose current tick started more than max ago, on the
// monotonic clock (now is a monotonic reading, as tickStarted's mono).
func (b *StatusBoard) stuck(now time.Time, max time.Duration) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	names := make([]string, 0, len(b.st.Loops))
	for n := range b.st.Loops {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if ls := b.st.Loops[n]; ls.Running && now.Sub(b.started[n]) > max {
			return n
		}
	}
	return ""
}

// Flush writes the status file atomically.
func (b *StatusBoard) Flush(now time.Time) error {
	if b.path == "" {
		return nil
	}
	b.mu.Lock()
	b.st.UpdatedAt = now.UTC()
	data, err := json.MarshalIndent(b.st, "", "  ")
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("encoding status: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(b.path), 0o755); err != nil {
		return err
	}
	tmp := b.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, b.path)
}
