package system

import (
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// maxReason bounds Reason: a few kubeadm preflight errors, never a log.
const maxReason = 1024

// boilerplate are lines tools print around a failure that say nothing
// about it (kubeadm's cmd/kubeadm/app/util/errors and preflight.RunChecks).
var boilerplate = []string{
	"To see the stack trace of this error execute with --v=5 or higher",
	"[preflight] If you know what you are doing, you can make a check non-fatal with",
	"[preflight] Some fatal errors occurred:",
}

// Reason picks the lines of a failed command's output that say why it
// failed, stderr before stdout, redacted:
//   - kubeadm preflight errors ("[ERROR CRI]: container runtime is not
//     running: ... level=fatal msg=...", preflight.RunChecks);
//   - kubeadm's phase error ("error execution phase kubelet-start: a Node
//     with name ... already exists");
//   - "error:" lines (kubectl, cobra) and level=fatal/error log lines;
//
// and otherwise the last line that is not boilerplate. Selected lines keep
// their order and are joined with " | ".
func Reason(r Result, secrets ...vmcontext.Secret) string {
	var lines []string
	for _, out := range [][]byte{r.Stderr, r.Stdout} {
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); l != "" && !isBoilerplate(l) {
				lines = append(lines, l)
			}
		}
	}
	var picked []string
	for _, l := range lines {
		if telling(l) && !contains(picked, l) {
			picked = append(picked, l)
		}
	}
	if len(picked) == 0 && len(lines) > 0 {
		// The tools' last words, from whichever stream had any.
		picked = []string{lastOf(r)}
	}
	s := vmcontext.Redact(strings.Join(picked, " | "), secrets...)
	if len(s) > maxReason {
		s = s[:maxReason] + "…"
	}
	return s
}

func telling(l string) bool {
	lower := strings.ToLower(l)
	return strings.Contains(l, "[ERROR ") ||
		strings.HasPrefix(l, "error execution phase ") ||
		strings.HasPrefix(lower, "error:") ||
		strings.Contains(l, "level=fatal") || strings.Contains(l, "level=error")
}

func isBoilerplate(l string) bool {
	for _, b := range boilerplate {
		if strings.HasPrefix(l, b) {
			return true
		}
	}
	return false
}

// lastOf is the last non-boilerplate line of stderr, else of stdout.
func lastOf(r Result) string {
	for _, out := range [][]byte{r.Stderr, r.Stdout} {
		ls := strings.Split(strings.TrimSpace(string(out)), "\n")
		for i := len(ls) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(ls[i]); l != "" && !isBoilerplate(l) {
				return l
			}
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
