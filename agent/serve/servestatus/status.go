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

	vmcontext "github.com/onekube/onekube/context"
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
	s.mask()
	return &s, nil
}

// mask passes every text of s, the loops' free-form reports included,
// through vmcontext.MaskTokens: serve never records a token, but an error
// may quote one (OneGate echoing a rejected update), in any case.
func (s *Status) mask() {
	s.Identity = vmcontext.MaskTokens(s.Identity)
	s.Leader = vmcontext.MaskTokens(s.Leader)
	for name, ls := range s.Loops {
		ls.LastError = vmcontext.MaskTokens(ls.LastError)
		ls.Report = maskJSON(ls.Report)
		s.Loops[name] = ls
	}
}

// maskJSON masks every string, keys included, of a decoded JSON value.
func maskJSON(v any) any {
	switch v := v.(type) {
	case string:
		return vmcontext.MaskTokens(v)
	case []any:
		for i := range v {
			v[i] = maskJSON(v[i])
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[vmcontext.MaskTokens(k)] = maskJSON(e)
		}
		return out
	}
	return v
}
