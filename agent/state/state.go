// Package state keeps what the agent must remember across reboots and
// crashes: a small JSON file of completed phases and published values, and a
// sentinel written once the bootstrap is done so later boots do nothing.
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// Paths under the agent's root. The directory is 0700 and the state file
// 0600 because the state holds the bootstrap token a re-publish needs.
const (
	Dir          = "/var/lib/onekube"
	StateFile    = Dir + "/state.json"
	SentinelFile = Dir + "/bootstrap.done"
)

// FormatVersion is the version of the state file layout. A file written by a
// newer agent is refused rather than half-understood; an older one is
// migrated on load and written back in this layout.
//
//   - 1: the bootstrap token in "token".
//   - 2: no secret at all. The token lives only in the kubeadm init config
//     (0600) kubeadm read, which is also the one place a rerun takes it from.
const FormatVersion = 2

// State is the agent's memory. A missing file is the empty state.
type State struct {
	VMID int `json:"vmid,omitempty"`
	// Role is the kind of node this VM bootstrapped as (init,
	// control-plane, worker); RoleName the OneFlow role the service
	// document listed it in. Once kubeadm ran, neither changes.
	Role     string `json:"role,omitempty"`
	RoleName string `json:"role_name,omitempty"`
	Phase    string `json:"phase,omitempty"` // the phase running or last run
	// Completed lists the phases that finished, in order.
	Completed []string `json:"completed,omitempty"`
	// Attempted lists the commands started and not known to have finished
	// (e.g. "kubeadm-join"); a rerun resets the node before trying again.
	Attempted []string `json:"attempted,omitempty"`
	// Token is the bootstrap token of this run, in memory only. A version 1
	// file carried it; it is read from there once and never written again.
	Token vmcontext.Secret `json:"-"`
	// Published holds what this VM wrote to OneGate (the token masked on
	// output: see Masked).
	Published map[string]string `json:"published,omitempty"`
	LastError string            `json:"last_error,omitempty"` // redacted
	UpdatedAt time.Time         `json:"updated_at,omitzero"`
}

// onDisk is State as stored.
type onDisk struct {
	Version int `json:"version"`
	State
}

// onDiskV1 is the version 1 layout: the same fields plus the token.
type onDiskV1 struct {
	State
	Token string `json:"token,omitempty"`
}

// Empty reports whether s holds no record of any work: no phase completed
// or attempted. A missing, null, {} or hand-emptied file all read so.
func (s *State) Empty() bool { return len(s.Completed) == 0 && len(s.Attempted) == 0 }

// Restart forgets the work of an earlier bootstrap (it was undone with
// kubeadm reset), keeping whose state this is.
func (s *State) Restart() {
	*s = State{VMID: s.VMID, Role: s.Role, RoleName: s.RoleName, UpdatedAt: s.UpdatedAt}
}

// Done reports whether phase completed.
func (s *State) Done(phase string) bool { return slices.Contains(s.Completed, phase) }

// MarkDone records phase as completed (once) and clears its attempt mark.
func (s *State) MarkDone(phase string) {
	if !s.Done(phase) {
		s.Completed = append(s.Completed, phase)
	}
	s.ClearAttempt(phase)
}

// WasAttempted reports whether a command was started and never recorded as
// finished.
func (s *State) WasAttempted(name string) bool { return slices.Contains(s.Attempted, name) }

// MarkAttempt records that name is about to run.
func (s *State) MarkAttempt(name string) {
	if !s.WasAttempted(name) {
		s.Attempted = append(s.Attempted, name)
	}
}

// ClearAttempt forgets an attempt mark.
func (s *State) ClearAttempt(name string) {
	s.Attempted = slices.DeleteFunc(s.Attempted, func(a string) bool { return a == name })
}

// Masked returns the published keys with the token value hidden, for
// status output.
func (s *State) Masked() map[string]string {
	out := make(map[string]string, len(s.Published))
	for k, v := range s.Published {
		if k == vmcontext.KeyPubToken && v != "" {
			v = vmcontext.Mask
		}
		out[k] = v
	}
	return out
}

// Store reads and writes the state and the sentinel under a root.
type Store struct {
	Root system.Root
}

// Load returns the saved state, or the empty state when there is none.
func (st Store) Load() (*State, error) {
	b, err := st.Root.ReadFile(StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &State{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading state file: %w", err)
	}
	return Parse(b)
}

// ErrCorrupt wraps a state file that does not parse.
var ErrCorrupt = errors.New("state file is corrupt")

// Parse decodes a state file of any known version.
func Parse(b []byte) (*State, error) {
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, StateFile, err)
	}
	switch {
	case v.Version > FormatVersion:
		return nil, fmt.Errorf("state file %s has format %d, this agent understands up to %d", StateFile, v.Version, FormatVersion)
	case v.Version <= 1: // 0: a file without a version, as written by hand
		var d onDiskV1
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, StateFile, err)
		}
		s := d.State
		s.Token = vmcontext.NewSecret(d.Token)
		return &s, nil
	}
	var d onDisk
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, StateFile, err)
	}
	s := d.State
	return &s, nil
}

// SetAside renames a state file that cannot be read to
// state.json.corrupt-<time>, keeping it for the operator, and returns the
// new name (under the root).
func (st Store) SetAside(at time.Time) (string, error) {
	dst := StateFile + ".corrupt-" + at.UTC().Format("20060102T150405Z")
	if err := os.Rename(st.Root.Path(StateFile), st.Root.Path(dst)); err != nil {
		return "", fmt.Errorf("setting the corrupt state file aside: %w", err)
	}
	return dst, nil
}

// Save writes s atomically with mode 0600, in a 0700 directory. The token
// is never written (format 2).
func (st Store) Save(s *State) error {
	if err := st.Root.MkdirAll(Dir, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	out := *s
	if len(out.Published) > 0 {
		out.Published = s.Masked()
	}
	b, err := json.MarshalIndent(onDisk{Version: FormatVersion, State: out}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding state: %w", err)
	}
	if err := st.Root.WriteFile(StateFile, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing state file: %w", err)
	}
	return nil
}

// Finished reports whether the sentinel exists: the bootstrap succeeded.
func (st Store) Finished() (bool, error) {
	ok, err := st.Root.Exists(SentinelFile)
	if err != nil {
		return false, fmt.Errorf("checking sentinel: %w", err)
	}
	return ok, nil
}

// Finish writes the sentinel. It is written last, after the state.
func (st Store) Finish(at time.Time) error {
	if err := st.Root.WriteFile(SentinelFile, []byte(at.UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing sentinel: %w", err)
	}
	return nil
}
