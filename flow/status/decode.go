package status

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNotService: the document is JSON but not a OneFlow service.
var ErrNotService = errors.New("not a OneFlow service document")

// DecodeService reads the answer of OneFlow's GET /service/:id:
//
//	{"DOCUMENT":{"ID":"12","NAME":"k8s","TEMPLATE":{"BODY":{"state":2,
//	  "roles":[{"name":"master","state":2,"cardinality":1,
//	    "nodes":[{"deploy_id":49,"vm_info":{"VM":{"ID":"49",...}}}]}]}}}}
//
// The document is oned XML turned into JSON, so ID is a string, while BODY
// is OneFlow's own JSON with numbers; both are accepted either way. A
// node's VM ID is vm_info.VM.ID, else deploy_id (shared/reference/onegate.md
// §1.5).
func DecodeService(b []byte) (Service, error) {
	var doc struct {
		Document *struct {
			ID       number `json:"ID"`
			Name     string `json:"NAME"`
			Template struct {
				Body *struct {
					Name  string `json:"name"`
					State number `json:"state"`
					Roles []struct {
						Name        string `json:"name"`
						State       number `json:"state"`
						Cardinality number `json:"cardinality"`
						Nodes       []struct {
							DeployID number `json:"deploy_id"`
							VMInfo   struct {
								VM struct {
									ID number `json:"ID"`
								} `json:"VM"`
							} `json:"vm_info"`
						} `json:"nodes"`
					} `json:"roles"`
				} `json:"BODY"`
			} `json:"TEMPLATE"`
		} `json:"DOCUMENT"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return Service{}, fmt.Errorf("decoding the OneFlow service: %w", err)
	}
	d := doc.Document
	if d == nil || d.Template.Body == nil {
		return Service{}, fmt.Errorf("decoding the OneFlow service: %w: no DOCUMENT.TEMPLATE.BODY", ErrNotService)
	}
	if !d.ID.set {
		return Service{}, fmt.Errorf("decoding the OneFlow service: %w: no DOCUMENT.ID", ErrNotService)
	}
	s := Service{ID: d.ID.n, Name: d.Name, State: d.Template.Body.State.n}
	if s.Name == "" {
		s.Name = d.Template.Body.Name
	}
	for i, r := range d.Template.Body.Roles {
		if r.Name == "" {
			return Service{}, fmt.Errorf("decoding the OneFlow service: %w: roles[%d] has no name", ErrNotService, i)
		}
		role := Role{Name: r.Name, State: r.State.n, Cardinality: r.Cardinality.n}
		for j, n := range r.Nodes {
			switch {
			case n.VMInfo.VM.ID.set:
				role.VMIDs = append(role.VMIDs, n.VMInfo.VM.ID.n)
			case n.DeployID.set:
				role.VMIDs = append(role.VMIDs, n.DeployID.n)
			default:
				return Service{}, fmt.Errorf("decoding the OneFlow service: %w: role %s node %d has no VM ID", ErrNotService, r.Name, j)
			}
		}
		s.Roles = append(s.Roles, role)
	}
	return s, nil
}

// number is an int sent as a JSON number or a string of digits; null and
// absence leave it unset.
type number struct {
	n   int
	set bool
}

func (n *number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	s := strings.Trim(string(b), `"`)
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%s is not an integer", b)
	}
	n.n, n.set = v, true
	return nil
}
