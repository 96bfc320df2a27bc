package servestatus

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// WriteText prints the part of `onekube-agent status` serve owns: who
// acts, the join token's expiry (never the token), the VMs waiting to
// join (and those it no longer waits for) and the Nodes whose VM is gone.
// now dates the expiry.
func (s *Status) WriteText(w io.Writer, now time.Time) error {
	var b strings.Builder
	row := func(k, v string) {
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(&b, "%-17s %s\n", k+":", v)
	}
	switch {
	case s.Acting:
		row("serve", "acting for the cluster ("+s.Identity+")")
	case s.Leader != "":
		row("serve", "standby; "+s.Leader+" acts")
	default:
		row("serve", "standby; nobody acts yet")
	}
	row("serve updated", s.UpdatedAt.Format(time.RFC3339))
	var pub PublishReport
	var tok TokensReport
	var cl CleanupReport
	loopReport(s, "publish", &pub)
	hasTokens := loopReport(s, "tokens", &tok)
	hasCleanup := loopReport(s, "cleanup", &cl)
	switch {
	case hasTokens && !tok.TokenExpires.IsZero():
		row("join token", expiry(tok.TokenExpires, now))
	case pub.Published && pub.Expires != "":
		if t, err := time.Parse(time.RFC3339, pub.Expires); err == nil {
			row("join token", expiry(t, now)+" (as published here)")
		}
	default:
		row("join token", "none (nobody waits)")
	}
	if pub.JoinDataRestored > 0 {
		row("join data", fmt.Sprintf("restored %d keys rewritten by a sibling VM or by hand (see serve's log)", pub.JoinDataRestored))
	}
	if hasTokens {
		row("waiting VMs", waiting(tok))
		for _, id := range sortedStrings(tok.GivenUp) {
			row("  given up", fmt.Sprintf("VM %s: waiting since %s, past the %s limit; no join token is kept for it",
				id, tok.GivenUp[id].UTC().Format(time.RFC3339), tok.WaitLimit))
		}
		for _, id := range sortedStrings(tok.NotWaiting) {
			row("  not waiting", "VM "+id+": "+tok.NotWaiting[id])
		}
	}
	if hasCleanup {
		var gone []string
		for _, n := range sortedStrings(cl.NodesWithoutVM) {
			gone = append(gone, fmt.Sprintf("%s (VM gone since %s)", n, cl.NodesWithoutVM[n].Format(time.RFC3339)))
		}
		row("nodes without VM", strings.Join(gone, ", "))
		for _, n := range sortedStrings(cl.Refused) {
			row("  refused", n+": "+cl.Refused[n])
		}
	}
	var rm RemediateReport
	if loopReport(s, "remediate", &rm) {
		writeRemediation(row, rm)
	}
	var ce CertsReport
	if loopReport(s, "certs", &ce) && !ce.Earliest.IsZero() {
		renewed := "never"
		if !ce.Renewed.IsZero() {
			renewed = ce.Renewed.UTC().Format(time.RFC3339)
		}
		row("certificates", expiry(ce.Earliest, now)+" ("+ce.EarliestFile+"), renewed "+renewed+", renew "+ce.RenewBefore+" before, "+ce.State)
		if ce.Error != "" {
			row("  CANNOT RENEW", ce.Error)
		}
	}
	for _, name := range sortedStrings(s.Loops) {
		if e := s.Loops[name].LastError; e != "" {
			row("  "+name+" error", e)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func expiry(t, now time.Time) string {
	return fmt.Sprintf("expires %s (in %s)", t.UTC().Format(time.RFC3339), t.Sub(now).Round(time.Second))
}

// loopReport decodes a loop's report, which the status file holds as
// plain JSON.
func loopReport(s *Status, loop string, into any) bool {
	ls, ok := s.Loops[loop]
	if !ok || ls.Report == nil {
		return false
	}
	b, err := json.Marshal(ls.Report)
	return err == nil && json.Unmarshal(b, into) == nil
}

// waiting lists the waiting VMs, each with when it started waiting if its
// clock runs.
func waiting(tok TokensReport) string {
	if len(tok.Waiting) == 0 {
		return "none"
	}
	s := make([]string, len(tok.Waiting))
	for i, id := range tok.Waiting {
		s[i] = fmt.Sprint(id)
		if since, ok := tok.WaitingSince[s[i]]; ok {
			s[i] += " (since " + since.UTC().Format(time.RFC3339) + ")"
		}
	}
	return strings.Join(s, ", ")
}

func sortedStrings[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writeRemediation prints the remediation loop's rows: its state, what
// stopped it, each unhealthy VM with its rung or what holds it, and the
// last actions.
func writeRemediation(row func(k, v string), rm RemediateReport) {
	row("remediation", rm.State)
	for _, st := range rm.Stopped {
		row("  STOPPED", st)
	}
	for _, id := range sortedStrings(rm.Unhealthy) {
		row("  unhealthy", "VM "+id+": "+rm.Unhealthy[id])
	}
	for _, id := range sortedStrings(rm.InFlight) {
		row("  in flight", "VM "+id+": "+rm.InFlight[id])
	}
	for _, id := range sortedStrings(rm.Blocked) {
		row("  held", "VM "+id+": "+rm.Blocked[id])
	}
	from := max(0, len(rm.Actions)-5)
	for _, a := range rm.Actions[from:] {
		line := fmt.Sprintf("%s VM %d", a.At.UTC().Format(time.RFC3339), a.VM)
		if a.Node != "" {
			line += " (" + a.Node + ")"
		}
		line += " " + a.Step
		if a.Detail != "" {
			line += ": " + a.Detail
		}
		if a.Error != "" {
			line += ": FAILED: " + a.Error
		}
		row("  did", line)
	}
}
