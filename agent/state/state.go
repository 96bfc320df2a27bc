// Package state keeps what the agent must remember across reboots and
// crashes: a small JSON file of completed phases and published values, and a
// sentinel written once the bootstrap is done so later boots do nothing.
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
// newer agent is refused rather than half-understood.
const FormatVersion = 1

// State is the agent's memory. A missing file is the empty state.
type State struct {
	VMID  int    `json:"vmid,omitempty"`
	Role  string `json:"role,omitempty"`
	Phase string `json:"phase,omitempty"` // the phase running or last run
	// Completed lists the phases that finished, in order.
	Completed []string `json:"completed,omitempty"`
	// Attempted lists the commands started and not known to have finished
	// (e.g. "kubeadm-join"); a rerun resets the node before trying again.
	Attempted []string `json:"attempted,omitempty"`
	// Token is the bootstrap token this master created. It is kept so a
	// rerun after a crash publishes the token the cluster knows.
	Token vmcontext.Secret `json:"-"`
	// Published holds what this VM wrote to OneGate (the token masked on
	// output: see Masked).
	Published map[string]string `json:"published,omitempty"`
	LastError string            `json:"last_error,omitempty"` // redacted
	UpdatedAt time.Time         `json:"updated_at,omitzero"`
}

// onDisk is State as stored: the token as plain text, in a 0600 file.
type onDisk struct {
	Version int `json:"version"`
	State
	Token string `json:"token,omitempty"`
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

// Parse decodes a state file.
func Parse(b []byte) (*State, error) {
	var d onDisk
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("parsing state file %s: %w", StateFile, err)
	}
	if d.Version > FormatVersion {
		return nil, fmt.Errorf("state file %s has format %d, this agent understands up to %d", StateFile, d.Version, FormatVersion)
	}
	s := d.State
	s.Token = vmcontext.NewSecret(d.Token)
	return &s, nil
}

// Save writes s atomically with mode 0600, in a 0700 directory.
func (st Store) Save(s *State) error {
	if err := st.Root.MkdirAll(Dir, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	b, err := json.MarshalIndent(onDisk{Version: FormatVersion, State: *s, Token: s.Token.Reveal()}, "", "  ")
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
