package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// Status is what `onekube-agent status` shows: the agent's own record,
// never a secret (the token is masked, errors were redacted when saved).
type Status struct {
	Bootstrapped bool              `json:"bootstrapped"`
	VMID         int               `json:"vmid,omitempty"`
	Role         string            `json:"role,omitempty"`
	Phase        string            `json:"phase,omitempty"`
	Completed    []string          `json:"completed,omitempty"`
	Pending      []string          `json:"interrupted,omitempty"`
	LastError    string            `json:"last_error,omitempty"`
	Published    map[string]string `json:"published,omitempty"`
	UpdatedAt    *time.Time        `json:"updated_at,omitempty"`
}

// ReadStatus reads the state and sentinel under root.
func ReadStatus(root system.Root) (*Status, error) {
	store := state.Store{Root: root}
	done, err := store.Finished()
	if err != nil {
		return nil, err
	}
	st, err := store.Load()
	if err != nil {
		return nil, err
	}
	// Errors were redacted when saved; mask again with every token this
	// node knows (a file an older agent wrote redacted whole tokens only),
	// and, as onekube-flow status does, anything shaped like a token or
	// its secret half in any case (another cluster's token quoted in an
	// error, an upper-cased one).
	secrets := []vmcontext.Secret{st.Token}
	if b, err := root.ReadFile(InitConfigFile); err == nil {
		if tok, err := kubeadm.InitConfigToken(b); err == nil {
			secrets = append(secrets, tok)
		}
	}
	if b, err := root.ReadFile(JoinConfigFile); err == nil {
		secrets = append(secrets, joinConfigToken(b))
	}
	known := secretsOf(secrets...)
	redact := func(v string) string { return vmcontext.MaskTokens(v, known...) }
	published := st.Masked()
	for k, v := range published {
		published[k] = redact(v)
	}
	s := &Status{
		Bootstrapped: done,
		VMID:         st.VMID,
		Role:         st.Role,
		Phase:        st.Phase,
		Completed:    st.Completed,
		Pending:      st.Attempted,
		LastError:    redact(st.LastError),
		Published:    published,
	}
	if !st.UpdatedAt.IsZero() {
		s.UpdatedAt = &st.UpdatedAt
	}
	return s, nil
}

// WriteJSON prints s as indented JSON.
func (s *Status) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteText prints s for a person.
func (s *Status) WriteText(w io.Writer) error {
	var b strings.Builder
	row := func(k, v string) {
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(&b, "%-12s %s\n", k+":", v)
	}
	boot := "no"
	if s.Bootstrapped {
		boot = "yes"
	}
	row("bootstrapped", boot)
	vmid := ""
	if s.VMID != 0 {
		vmid = fmt.Sprint(s.VMID)
	}
	row("vm", vmid)
	row("role", s.Role)
	row("phase", s.Phase)
	row("completed", strings.Join(s.Completed, ", "))
	if len(s.Pending) > 0 {
		row("interrupted", strings.Join(s.Pending, ", "))
	}
	row("last error", s.LastError)
	updated := ""
	if s.UpdatedAt != nil {
		updated = s.UpdatedAt.Format(time.RFC3339)
	}
	row("updated", updated)
	if len(s.Published) > 0 {
		b.WriteString("published:\n")
		for _, k := range slices.Sorted(maps.Keys(s.Published)) {
			fmt.Fprintf(&b, "  %s=%s\n", k, s.Published[k])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// joinConfigToken finds the bootstrap token in a join config, for
// masking only (zero when there is none).
func joinConfigToken(b []byte) vmcontext.Secret {
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "token: "); ok && kubeadm.ValidToken(strings.TrimSpace(v)) {
			return vmcontext.NewSecret(strings.TrimSpace(v))
		}
	}
	return vmcontext.Secret{}
}
