package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

// object is the part of a manifest document the stand-in checks.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Items []object `json:"items"` // kind: List
}

// apply parses every document of the manifest and requires apiVersion,
// kind and a name, as the API server would.
func apply(root string, in invocation, e *env.Entry, stdin io.Reader, out io.Writer) error {
	if len(in.words) != 1 || in.file == "" {
		return fmt.Errorf("usage: kubectl apply -f FILE")
	}
	var b []byte
	var err error
	if in.file == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(env.Resolve(root, in.file))
	}
	if err != nil {
		return fmt.Errorf("the path %q does not exist", in.file)
	}
	var objs []object
	for i, doc := range env.SplitDocuments(b) {
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return fmt.Errorf("error parsing %s: document %d: %v", in.file, i+1, err)
		}
		if o.Kind == "List" {
			objs = append(objs, o.Items...)
			continue
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 {
		return fmt.Errorf("no objects passed to apply")
	}
	for i, o := range objs {
		if o.APIVersion == "" || o.Kind == "" {
			return fmt.Errorf("error validating %q: object %d: apiVersion and kind are required", in.file, i+1)
		}
		if o.Metadata.Name == "" {
			return fmt.Errorf("error validating %q: %s object %d: metadata.name is required", in.file, o.Kind, i+1)
		}
		e.Objects = append(e.Objects, o.Kind+"/"+o.Metadata.Name)
		fmt.Fprintf(out, "%s/%s created\n", strings.ToLower(o.Kind), o.Metadata.Name)
	}
	return nil
}

// taint handles `taint nodes NAME|--all SPEC...`; it checks the nodes exist
// and the specs are well formed, and records them.
func taint(api *env.APIServer, in invocation, e *env.Entry, out io.Writer) error {
	w := in.words
	if len(w) < 3 || (w[1] != "nodes" && w[1] != "node" && w[1] != "no") {
		return fmt.Errorf("usage: kubectl taint nodes NAME KEY[=VALUE]:EFFECT | KEY-")
	}
	nodes, err := api.Nodes()
	if err != nil {
		return err
	}
	var targets []string
	specs := w[2:]
	if in.all {
		for _, n := range nodes {
			targets = append(targets, n.Name)
		}
	} else {
		targets, specs = []string{w[2]}, w[3:]
		if !hasNode(nodes, w[2]) {
			return fmt.Errorf("nodes %q not found", w[2])
		}
	}
	if len(specs) == 0 {
		return fmt.Errorf("at least one taint update is required")
	}
	verb := "tainted"
	for _, s := range specs {
		if strings.HasSuffix(s, "-") {
			verb = "untainted"
		} else if !strings.Contains(s, ":") {
			return fmt.Errorf("invalid taint spec: %s", s)
		}
	}
	for _, n := range targets {
		e.Objects = append(e.Objects, "Node/"+n)
		fmt.Fprintf(out, "node/%s %s\n", n, verb)
	}
	return nil
}

func get(api *env.APIServer, in invocation, out io.Writer) error {
	w := in.words
	if len(w) < 2 || (w[1] != "nodes" && w[1] != "node" && w[1] != "no") {
		return fmt.Errorf("the stand-in only implements `get nodes`")
	}
	nodes, err := api.Nodes()
	if err != nil {
		return err
	}
	if len(w) > 2 {
		if !hasNode(nodes, w[2]) {
			return fmt.Errorf("nodes %q not found", w[2])
		}
		nodes = slices.DeleteFunc(nodes, func(n env.Node) bool { return n.Name != w[2] })
	}
	if in.output == "name" {
		for _, n := range nodes {
			fmt.Fprintf(out, "node/%s\n", n.Name)
		}
		return nil
	}
	if in.output != "" {
		return fmt.Errorf("the stand-in supports -o name only")
	}
	if len(nodes) == 0 {
		fmt.Fprintln(os.Stderr, "No resources found")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tROLES\tAGE\tVERSION")
	for _, n := range nodes {
		status := "NotReady"
		if n.Ready() {
			status = "Ready"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t1m\t%s\n", n.Name, status, n.Role, env.Version())
	}
	return tw.Flush()
}

func hasNode(nodes []env.Node, name string) bool { return roleOf(nodes, name) != "" }

func roleOf(nodes []env.Node, name string) string {
	for _, n := range nodes {
		if n.Name == name {
			return n.Role
		}
	}
	return ""
}
