package env

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// The node registry stands in for the API server's Node list: init and join
// add the node they set up under their root, reset removes it, and
// `kubectl get nodes` prints it. One line per node: "name role".
const nodesFile = StateDir + "/nodes"

// Node is one registered node.
type Node struct{ Name, Role string }

// Nodes lists the nodes registered under root.
func Nodes(root string) ([]Node, error) {
	b, err := os.ReadFile(Path(root, nodesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Node
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if name, role, ok := strings.Cut(line, " "); ok {
			out = append(out, Node{Name: name, Role: role})
		}
	}
	return out, nil
}

// SetNodes replaces the registry under root.
func SetNodes(root string, nodes []Node) error {
	p := Path(root, nodesFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, n := range nodes {
		b.WriteString(n.Name + " " + n.Role + "\n")
	}
	return os.WriteFile(p, []byte(b.String()), 0o644)
}

// AddNode registers a node under root, replacing one of the same name.
func AddNode(root string, n Node) error {
	nodes, err := Nodes(root)
	if err != nil {
		return err
	}
	kept := nodes[:0]
	for _, o := range nodes {
		if o.Name != n.Name {
			kept = append(kept, o)
		}
	}
	return SetNodes(root, append(kept, n))
}
