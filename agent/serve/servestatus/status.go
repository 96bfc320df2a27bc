// Package servestatus is the status file `onekubed serve` writes and
// `onekube-agent status` reads: its path, its document and the loops'
// reports in it, and their text form. It imports no Kubernetes client, so
// the bootstrap agent stays small (issue 14); agent/serve writes it.
package servestatus

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// StatusFile is where serve keeps its observations for `onekube-agent
// status`, under the root. It lives on /run: it is a view of the present,
// never state a restart needs.
const StatusFile = "/run/onekube/serve.json"

// Status is the document in StatusFile. It holds no secrets: loops report
// a token's expiry, never the token.
type Status struct {
	Acting    bool                  `json:"acting"`
	Identity  string                `json:"identity,omitempty"`
	Leader    string                `json:"leader,omitempty"` // the lease holder as last seen
	UpdatedAt time.Time             `json:"updated_at"`
	Loops     map[string]LoopStatus `json:"loops"`
}

// LoopStatus is one loop's last tick.
type LoopStatus struct {
	TickStarted time.Time `json:"tick_started,omitzero"`
	TickEnded   time.Time `json:"tick_ended,omitzero"`
	Running     bool      `json:"running"`
	LastError   string    `json:"last_error,omitempty"`
	Report      any       `json:"report,omitempty"`
}

// ReadStatus reads a status file written by serve.
func ReadStatus(path string) (*Status, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Status
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return &s, nil
}
