package status

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
)

// maxError is how much of a VM's error a table cell shows; --json has up
// to MaxValue bytes.
const maxError = 60

// maxCell is how much of any other text from a VM a table cell shows.
const maxCell = 64

// WriteTable prints a header line, one row per VM, and the reasons the
// outcome is not ready. Text from VMs is stripped of control characters so
// a hostile USER_TEMPLATE cannot drive the terminal.
func WriteTable(w io.Writer, r Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "service %s (ID %d): %s, %d of %d VMs ready: %s\n",
		cell(r.ServiceName), r.ServiceID, r.ServiceState, r.ReadyVMs(), len(r.VMs), r.Outcome)
	writeCluster(&b, r.Cluster, Now())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tVM\tNAME\tSTATE\tPHASE\tREADY\tNODE\tIP\tERROR")
	for _, v := range r.VMs {
		ready := "no"
		if v.Ready {
			ready = "yes"
		}
		state, errText := vmState(v.VM), v.Error
		if v.ReadError != "" {
			state, ready, errText = "?", "?", v.ReadError
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(v.Role), v.ID, short(v.Name), cell(state),
			short(v.Phase), ready, short(v.NodeName), short(v.IP), truncate(cell(errText), maxError))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeControlPlane(&b, r)
	writeUpgrade(&b, r)
	writeExposure(&b, r.VMs)
	for _, reason := range r.Reasons {
		fmt.Fprintf(&b, "%s: %s\n", r.Outcome, truncate(cell(reason), 2*maxError))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell makes outside text one printable, tab-free token, "-" when empty.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		if !unicode.IsPrint(r) {
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return orDash(s)
}

// short is a cell of at most maxCell characters.
func short(s string) string { return truncate(cell(s), maxCell) }

func truncate(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}
