package access

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"

	vmcontext "github.com/onekube/onekube/context"
)

// Entry is one kubeconfig credential: a cluster, a user and the context
// joining them, under the names a merge adds or replaces.
type Entry struct {
	Cluster string // the cluster entry's name
	Name    string // the user and context entries' name
	Server  string // https://host:port
	CAPEM   []byte
	CertPEM []byte
	KeyPEM  vmcontext.Secret
}

// ErrNotKubeconfig: the existing file cannot be merged into.
var ErrNotKubeconfig = errors.New("not a kubeconfig")

// MaxKubeconfig bounds the file a merge reads; real ones are kilobytes.
const MaxKubeconfig = 4 << 20

// Render returns a kubeconfig holding only e, e's context current.
func Render(e Entry) ([]byte, error) { return Merge(nil, e) }

// Merge adds e to an existing kubeconfig (empty: a new one) and makes its
// context current; see MergeReport.
func Merge(existing []byte, e Entry) ([]byte, error) {
	out, _, err := MergeReport(existing, e)
	return out, err
}

// Merged says under which names MergeReport wrote an entry.
type Merged struct{ Cluster, User, Context string }

// MergeReport adds e to an existing kubeconfig and makes its context
// current. The context named e.Name is replaced in place. Its cluster and
// user entries are written under e.Cluster and e.Name unless another
// context refers to that name and the entry there does not already hold
// exactly e's: that context would then send its credentials to e's
// server, or e's to its server, so the entry is left alone and e's goes
// under the first free name of NAME-2, NAME-3, …. Every other cluster,
// user, context,
// preference and extension, and any field this code does not know, is
// kept. kubectl itself does not keep comments when it writes the file,
// nor does this.
func MergeReport(existing []byte, e Entry) ([]byte, Merged, error) {
	doc, err := parseKubeconfig(existing)
	if err != nil {
		return nil, Merged{}, err
	}
	b64 := base64.StdEncoding.EncodeToString
	cluster := map[string]any{"server": e.Server, "certificate-authority-data": b64(e.CAPEM)}
	user := map[string]any{"client-certificate-data": b64(e.CertPEM), "client-key-data": b64([]byte(e.KeyPEM.Reveal()))}
	m := Merged{Context: e.Name}
	if m.Cluster, err = freeName(doc, "clusters", "cluster", e.Cluster, e.Name, cluster); err != nil {
		return nil, m, err
	}
	if m.User, err = freeName(doc, "users", "user", e.Name, e.Name, user); err != nil {
		return nil, m, err
	}
	for _, u := range []struct {
		key, name, field string
		body             map[string]any
	}{
		{"clusters", m.Cluster, "cluster", cluster},
		{"users", m.User, "user", user},
		{"contexts", m.Context, "context", map[string]any{"cluster": m.Cluster, "user": m.User}},
	} {
		if err := upsert(doc, u.key, u.name, u.field, u.body); err != nil {
			return nil, m, err
		}
	}
	doc["current-context"] = e.Name
	if _, ok := doc["apiVersion"]; !ok {
		doc["apiVersion"] = "v1"
	}
	if _, ok := doc["kind"]; !ok {
		doc["kind"] = "Config"
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, m, fmt.Errorf("rendering the kubeconfig: %w", err)
	}
	out, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, m, fmt.Errorf("rendering the kubeconfig: %w", err)
	}
	return out, m, nil
}

// parseKubeconfig reads a kubeconfig (YAML or JSON) into a generic
// document, so that whatever it holds survives the merge.
func parseKubeconfig(b []byte) (map[string]any, error) {
	if len(b) > MaxKubeconfig {
		return nil, fmt.Errorf("%w: larger than %d MiB", ErrNotKubeconfig, MaxKubeconfig>>20)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, nil
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotKubeconfig, err)
	}
	if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
		return map[string]any{}, nil // only comments
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, fmt.Errorf("%w: the top level is not a mapping", ErrNotKubeconfig)
	}
	if k, ok := doc["kind"]; ok && k != "Config" {
		return nil, fmt.Errorf("%w: kind is %v, not Config", ErrNotKubeconfig, k)
	}
	if v, ok := doc["apiVersion"]; ok && v != "v1" {
		return nil, fmt.Errorf("%w: apiVersion is %v, not v1", ErrNotKubeconfig, v)
	}
	for _, list := range []string{"clusters", "users", "contexts"} {
		if _, err := namedList(doc, list); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// namedList returns doc[key] as a list of named entries (nil when absent).
func namedList(doc map[string]any, key string) ([]any, error) {
	v, ok := doc[key]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a list", ErrNotKubeconfig, key)
	}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s[%d] is not a mapping", ErrNotKubeconfig, key, i)
		}
		if _, ok := m["name"].(string); !ok {
			return nil, fmt.Errorf("%w: %s[%d] has no name", ErrNotKubeconfig, key, i)
		}
	}
	return list, nil
}

// upsert replaces the entry named name in doc[key] (in its place) or
// appends it.
func upsert(doc map[string]any, key, name, field string, body map[string]any) error {
	list, err := namedList(doc, key)
	if err != nil {
		return err
	}
	entry := map[string]any{"name": name, field: body}
	for i, e := range list {
		if e.(map[string]any)["name"] == name {
			list[i] = entry
			doc[key] = list
			return nil
		}
	}
	doc[key] = append(list, entry)
	return nil
}

// Existing is what a kubeconfig already holds under an entry's names.
type Existing struct {
	Server string
	CAPEM  []byte
	Cert   *x509.Certificate
}

// Lookup finds the credential a previous run wrote for the context name,
// through the cluster and user entries it refers to: cluster and name, or
// the NAME-2, … a merge picks when another context uses those; ok is false
// when the file has none (or not one this code wrote the way it writes).
func Lookup(kubeconfigText []byte, cluster, name string) (Existing, bool) {
	doc, err := parseKubeconfig(kubeconfigText)
	if err != nil {
		return Existing{}, false
	}
	body := func(key, entry, field string) map[string]any {
		list, _ := namedList(doc, key)
		b, _ := findNamed(list, entry)[field].(map[string]any)
		return b
	}
	x := body("contexts", name, "context")
	cname, _ := x["cluster"].(string)
	uname, _ := x["user"].(string)
	if x == nil || !derivedName(cname, cluster) || !derivedName(uname, name) {
		return Existing{}, false
	}
	c, u := body("clusters", cname, "cluster"), body("users", uname, "user")
	if c == nil || u == nil {
		return Existing{}, false
	}
	server, _ := c["server"].(string)
	ca, err1 := decodeB64(c["certificate-authority-data"])
	certPEM, err2 := decodeB64(u["client-certificate-data"])
	if err1 != nil || err2 != nil || server == "" {
		return Existing{}, false
	}
	blk, _ := pem.Decode(certPEM)
	if blk == nil {
		return Existing{}, false
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return Existing{}, false
	}
	return Existing{Server: server, CAPEM: ca, Cert: cert}, true
}

func decodeB64(v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, errors.New("not a string")
	}
	return base64.StdEncoding.DecodeString(s)
}
