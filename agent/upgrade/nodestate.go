package upgrade

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// NodeState is the executor's record in /var/lib/onekube (0600), so that a
// crash or a reboot resumes after the last step that finished.
type NodeState struct {
	Target    string `json:"target"`
	BundleSHA string `json:"bundleSHA256"`
	// Done is the last step that finished ("" for none).
	Done Step `json:"done,omitempty"`
	// Failed is why the last run stopped, and FailedAttempt the plan's
	// attempt it stopped in: a new attempt (the owner ran the CLI again)
	// retries.
	Failed        string `json:"failed,omitempty"`
	FailedAttempt int    `json:"failedAttempt,omitempty"`
}

// LoadNodeState reads path; a missing file is an empty state, a corrupt
// one is an error (the executor then starts over: every step is
// idempotent).
func LoadNodeState(path string) (NodeState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NodeState{}, nil
	}
	if err != nil {
		return NodeState{}, err
	}
	var s NodeState
	if err := json.Unmarshal(b, &s); err != nil {
		return NodeState{}, fmt.Errorf("%s: %w", path, err)
	}
	if s.Done != "" && stepIndex(s.Done) < 0 {
		return NodeState{}, fmt.Errorf("%s: unknown step %q", path, s.Done)
	}
	return s, nil
}

// SaveNodeState writes s to path atomically with mode 0600.
func SaveNodeState(path string, s NodeState) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".upgrade-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// NextSteps is what remains for a node in state s: the steps after Done,
// with attach, mount and verify prefixed again whenever a remaining step
// reads the bundle (a reboot unmounted it, and what was verified before
// the crash is verified again before use).
func NextSteps(s NodeState) []Step {
	i := stepIndex(s.Done) + 1 // -1 + 1 = 0 for ""
	rest := Steps[i:]
	needsBundle := false
	for _, st := range rest {
		if st == StepKubeadm || st == StepImages || st == StepUpgrade || st == StepKubelet {
			needsBundle = true
		}
	}
	if !needsBundle || i == 0 {
		return append([]Step(nil), rest...)
	}
	var out []Step
	for _, st := range []Step{StepAttach, StepMount, StepVerify} {
		if stepIndex(st) < i {
			out = append(out, st)
		}
	}
	return append(out, rest...)
}
