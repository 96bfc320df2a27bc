package status

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// Living is what a master's `onekubed serve` published: whether it
// acts, the join token's expiry (never the token), and, on the acting
// master, the VMs waiting to join, the Nodes whose VM is gone and any
// clean-up it refused.
type Living struct {
	Serve          string // ONEGATE_K8S_SERVE: acting, standby or ""
	TokenExpires   string // ONEGATE_K8S_TOKEN_EXPIRES
	Waiting        string // ONEGATE_K8S_WAITING, VM IDs
	NodesWithoutVM string // ONEGATE_K8S_NODES_WITHOUT_VM
	ServeError     string // ONEGATE_K8S_SERVE_ERROR
	Remediation    string // ONEGATE_K8S_REMEDIATION
	Autoscale      string // ONEGATE_K8S_AUTOSCALE
}

func livingFrom(get func(string) string) Living {
	return Living{
		Serve:          get(vmcontext.KeyPubServe),
		TokenExpires:   get(vmcontext.KeyPubTokenExpires),
		Waiting:        get(vmcontext.KeyPubWaiting),
		NodesWithoutVM: get(vmcontext.KeyPubNodesWithoutVM),
		ServeError:     get(vmcontext.KeyPubServeError),
		Remediation:    get(vmcontext.KeyPubRemediation),
		Autoscale:      get(vmcontext.KeyPubAutoscale),
	}
}

// Cluster is the living cluster as the masters publish it.
type Cluster struct {
	// Acting lists the masters that say they act: one, or more while a
	// dead master's stale value lingers, or none before serve runs.
	Acting       []string `json:"acting"`
	TokenExpires string   `json:"token_expires,omitempty"`
	// Waiting, NodesWithoutVM and ServeError come from the acting master.
	Waiting        []string `json:"waiting"`
	NodesWithoutVM []string `json:"nodes_without_vm"`
	ServeError     string   `json:"serve_error,omitempty"`
	// Remediation is the acting master's remediation line: what it did,
	// what it waits for, or why it stopped.
	Remediation string `json:"remediation,omitempty"`
	// Autoscale is the acting master's autoscaler line: bounds,
	// cardinality, pending pods, a refusal, the last scale each way.
	Autoscale string `json:"autoscale,omitempty"`
}

// clusterOf reads the rows' published serve data; nil when no VM runs serve.
func clusterOf(rows []Row) *Cluster {
	c := &Cluster{Acting: []string{}, Waiting: []string{}, NodesWithoutVM: []string{}}
	seen := false
	for _, r := range rows {
		l := r.Living
		if l.Serve == "" && l.TokenExpires == "" {
			continue
		}
		seen = true
		if l.TokenExpires > c.TokenExpires { // RFC 3339 in UTC sorts as time
			c.TokenExpires = l.TokenExpires
		}
		if l.Serve != "acting" {
			continue
		}
		name := r.NodeName
		if name == "" || name == "-" {
			name = fmt.Sprintf("VM %d", r.ID)
		}
		c.Acting = append(c.Acting, fmt.Sprintf("%s (VM %d)", name, r.ID))
		c.Waiting = append(c.Waiting, strings.Fields(l.Waiting)...)
		c.NodesWithoutVM = append(c.NodesWithoutVM, strings.Fields(l.NodesWithoutVM)...)
		if l.ServeError != "" {
			c.ServeError = strings.TrimSpace(c.ServeError + " " + l.ServeError)
		}
		if l.Remediation != "" {
			c.Remediation = strings.TrimSpace(c.Remediation + " " + l.Remediation)
		}
		if l.Autoscale != "" {
			c.Autoscale = strings.TrimSpace(c.Autoscale + " " + l.Autoscale)
		}
	}
	if !seen {
		return nil
	}
	sort.Strings(c.Waiting)
	sort.Strings(c.NodesWithoutVM)
	return c
}

// writeCluster prints the living cluster's lines under the table header.
func writeCluster(w io.Writer, c *Cluster, now time.Time) {
	if c == nil {
		return
	}
	list := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return cell(strings.Join(s, " "))
	}
	acting := "nobody yet"
	if len(c.Acting) > 0 {
		acting = cell(strings.Join(c.Acting, ", "))
	}
	token := "none (nobody waits)"
	if t, err := time.Parse(time.RFC3339, c.TokenExpires); err == nil {
		token = fmt.Sprintf("expires %s (in %s)", t.UTC().Format(time.RFC3339), t.Sub(now).Round(time.Second))
	}
	fmt.Fprintf(w, "acting master: %s; join token: %s; waiting VMs: %s; nodes without VM: %s\n", acting, token, list(c.Waiting), list(c.NodesWithoutVM))
	if c.ServeError != "" {
		fmt.Fprintf(w, "serve error: %s\n", truncate(cell(c.ServeError), 4*maxError))
	}
	if c.Remediation != "" {
		fmt.Fprintf(w, "remediation: %s\n", truncate(cell(c.Remediation), 4*maxError))
	}
	if c.Autoscale != "" {
		writeAutoscale(w, c.Autoscale)
	}
}

// maxAutoscalePart bounds one line of the autoscaler's; serve cuts each
// part at 200 bytes, so a line from it always shows whole.
const maxAutoscalePart = 240

// maxAutoscaleParts bounds the labelled lines (serve writes at most four).
const maxAutoscaleParts = 6

// writeAutoscale prints the autoscaler's line readable whole: the counts
// ("workers 2 (bounds 1:3) | 1 pods unschedulable") on the "autoscale:"
// line, and each labelled part serve publishes ("refused: ...", "last
// up: ...") on an "autoscale <label>: ..." line of its own, rather than
// one line cut at a fixed width (agent/serve/autoscale_line.go).
func writeAutoscale(w io.Writer, line string) {
	var counts, labelled []string
	for _, p := range strings.Split(cell(line), " | ") {
		if label, _, ok := strings.Cut(p, ": "); ok && !strings.ContainsAny(label, "(:") {
			labelled = append(labelled, p)
			continue
		}
		counts = append(counts, p)
	}
	fmt.Fprintf(w, "autoscale: %s\n", truncate(orDash(strings.Join(counts, " | ")), maxAutoscalePart))
	for i, p := range labelled {
		if i == maxAutoscaleParts {
			fmt.Fprintf(w, "autoscale: %d more parts (see --json)\n", len(labelled)-i)
			break
		}
		fmt.Fprintf(w, "autoscale %s\n", truncate(p, maxAutoscalePart))
	}
}

// Now is the clock the table dates the token's expiry with (a variable
// so golden tests are stable).
var Now = time.Now
