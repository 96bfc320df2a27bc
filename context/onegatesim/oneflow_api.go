package onegatesim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// OneFlowHandler serves the reads of OneFlow's REST API a user's CLI makes
// about services (GET /service and GET /service/:id), from the services
// this simulator runs, behind Basic auth for user:password. The documents
// have the shape of the real server's: a DOCUMENT (pool) whose
// TEMPLATE.BODY holds the service with its roles and nodes, each node
// carrying deploy_id and the short vm_info OneFlow keeps since 5.12.
func (s *Sim) OneFlowHandler(user, password string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != password {
			http.Error(w, "Not authorized", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet {
			http.Error(w, "not simulated", http.StatusNotImplemented)
			return
		}
		path := strings.TrimSuffix(r.URL.Path, "/")
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case path == "/service":
			var docs []any
			for _, id := range sortedIDs(s.services) {
				docs = append(docs, s.flowDocument(s.services[id]))
			}
			writeFlowJSON(w, map[string]any{"DOCUMENT_POOL": map[string]any{"DOCUMENT": docs}})
		case strings.HasPrefix(path, "/service/"):
			id, err := strconv.Atoi(strings.TrimPrefix(path, "/service/"))
			svc := s.services[id]
			if err != nil || svc == nil {
				http.Error(w, "Error getting document ["+strings.TrimPrefix(path, "/service/")+"].", http.StatusNotFound)
				return
			}
			writeFlowJSON(w, map[string]any{"DOCUMENT": s.flowDocument(svc)})
		default:
			http.Error(w, "not simulated", http.StatusNotFound)
		}
	})
}

func (s *Sim) flowDocument(svc *service) map[string]any {
	roles := []any{}
	for _, r := range svc.roles {
		nodes := []any{}
		for _, v := range r.nodes {
			nodes = append(nodes, map[string]any{"deploy_id": v.id, "vm_info": map[string]any{"VM": map[string]any{
				"ID": strconv.Itoa(v.id), "UID": strconv.Itoa(s.owner.id), "GID": "0", "UNAME": s.owner.uname(), "GNAME": "oneadmin", "NAME": v.name}}})
		}
		roles = append(roles, map[string]any{"name": r.spec.name, "state": r.state, "cardinality": r.cardinality, "nodes": nodes})
	}
	return map[string]any{
		"ID": strconv.Itoa(svc.id), "UID": strconv.Itoa(s.owner.id), "UNAME": s.owner.uname(), "NAME": svc.spec.name,
		"TEMPLATE": map[string]any{"BODY": map[string]any{"name": svc.spec.name, "state": svc.state, "roles": roles}},
	}
}

func writeFlowJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
