package env

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Entry is one line of the invocation log. It is test-only and deliberately
// holds the full bootstrap token and hash: the e2e tests assert that the
// token the master published equals the one in its init config and that every
// worker joined with exactly those values. The file is created 0600.
type Entry struct {
	Time     string   `json:"time"` // RFC 3339, nanoseconds, at start
	PID      int      `json:"pid"`
	Binary   string   `json:"binary"` // "kubeadm" or "kubectl"
	Args     []string `json:"args"`
	Command  string   `json:"command,omitempty"` // "init", "join", "apply", ...
	ExitCode int      `json:"exit"`
	Error    string   `json:"error,omitempty"`

	// kubeadm init/join.
	APIVersion        string `json:"apiVersion,omitempty"`
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	NodeName          string `json:"nodeName,omitempty"`
	Hostname          string `json:"hostname,omitempty"` // the host's kernel hostname when it ran
	NodeIP            string `json:"nodeIP,omitempty"`
	Endpoint          string `json:"endpoint,omitempty"` // init: advertise ip:port; join: apiServerEndpoint
	TokenID           string `json:"tokenID,omitempty"`
	Token             string `json:"token,omitempty"`
	TokenTTL          string `json:"tokenTTL,omitempty"`
	Hash              string `json:"hash,omitempty"` // init: of the CA written; join: from the config
	Tainted           *bool  `json:"tainted,omitempty"`
	ControlPlane      bool   `json:"controlPlane,omitempty"`
	// ControlPlaneEndpoint is init's; Uploaded says init uploaded certs.
	ControlPlaneEndpoint string `json:"controlPlaneEndpoint,omitempty"`
	Uploaded             bool   `json:"uploaded,omitempty"`

	// kubectl.
	Kubeconfig string   `json:"kubeconfig,omitempty"`
	Objects    []string `json:"objects,omitempty"` // "Kind/name" applied, or nodes tainted
}

// NewEntry starts an entry for this process.
func NewEntry(binary string, args []string) *Entry {
	return &Entry{
		Time:   time.Now().UTC().Format(time.RFC3339Nano),
		PID:    os.Getpid(),
		Binary: binary,
		Args:   args,
	}
}

// Append writes e as one line to VarLog, if set. One write call per line on
// an O_APPEND file keeps lines from concurrent processes whole.
func (e *Entry) Append() error {
	path := os.Getenv(VarLog)
	if path == "" {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening %s: %w", VarLog, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadLog parses a log file written by Append, for tests.
func ReadLog(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Entry
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var e Entry
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", path, err)
		}
		out = append(out, e)
	}
	return out, nil
}
