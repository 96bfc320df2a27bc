package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/context/onegatesim"
)

// line is one timeline entry.
type line struct {
	at   time.Time
	who  string
	what string
}

// timeline merges the simulator's events (what OneFlow and OneGate saw)
// with the agents' own phase logs (JSON lines on stderr).
func timeline(c *simcluster.Cluster, runs []*simcluster.Run) []line {
	var out []line
	for _, e := range c.Sim.Events() {
		switch e.Kind {
		case onegatesim.EventVMUpdated, onegatesim.EventFault:
			continue // one per phase report; the agents' lines say more
		}
		who := "oneflow"
		if e.VMID >= 0 {
			who = fmt.Sprintf("oneflow vm %d", e.VMID)
		}
		what := string(e.Kind)
		if e.Role != "" {
			what += " role=" + e.Role
		}
		if e.Detail != "" {
			what += " " + e.Detail
		}
		out = append(out, line{at: e.Time, who: who, what: what})
	}
	for _, r := range runs {
		who := fmt.Sprintf("vm %d %s", r.VM.ID, r.VM.Role)
		out = append(out, line{at: r.Start, who: who, what: "onekube-agent started"})
		out = append(out, agentLines(who, r.Output())...)
		out = append(out, line{at: r.End, who: who, what: fmt.Sprintf("onekube-agent exited %d", r.Code)})
	}
	slices.SortStableFunc(out, func(a, b line) int { return a.at.Compare(b.at) })
	return out
}

// agentLines picks the phase and discovery records out of an agent's JSON
// log.
func agentLines(who, output string) []line {
	var out []line
	sc := bufio.NewScanner(strings.NewReader(output))
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(rec["time"]))
		if err != nil {
			continue
		}
		msg := fmt.Sprint(rec["msg"])
		var what string
		switch msg {
		case "phase started":
			what = fmt.Sprintf("phase %s", rec["phase"])
		case "phase done":
			what = fmt.Sprintf("phase %s done (%s)", rec["phase"], duration(rec["duration"]))
		case "phase failed":
			what = fmt.Sprintf("phase %s FAILED: %s", rec["phase"], rec["error"])
		case "node discovered":
			what = fmt.Sprintf("discovered: role %s, %s, masters %s", rec["role"], rec["kind"], rec["masters"])
		case "master ready":
			what = fmt.Sprintf("master VM %v ready at %s after %v polls", rec["master_vm"], rec["endpoint"], rec["attempts"])
		default:
			continue
		}
		out = append(out, line{at: at, who: who, what: what})
	}
	return out
}

// duration reads slog's JSON encoding of a time.Duration (nanoseconds).
func duration(v any) time.Duration {
	ns, _ := v.(float64)
	return time.Duration(ns).Round(time.Millisecond / 10)
}

func printTimeline(w io.Writer, lines []line) {
	if len(lines) == 0 {
		return
	}
	t0 := lines[0].at
	fmt.Fprintf(w, "%9s  %-18s %s\n", "t (ms)", "who", "what")
	for _, l := range lines {
		fmt.Fprintf(w, "%9.1f  %-18s %s\n", float64(l.at.Sub(t0).Microseconds())/1000, l.who, l.what)
	}
}
