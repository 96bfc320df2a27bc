// Command faildigest reads `go test` text output (verbose or not, one
// package or many) and prints, for each failed test, the first line of
// every message it logged. CI prints it last: a failure's own message is
// otherwise buried under the bed's log dumps, and only the end of CI's
// output is kept.
package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

var (
	// "=== RUN   TestX", "=== NAME  TestX/sub", "=== CONT  TestX".
	marker = regexp.MustCompile(`^=== (?:RUN|NAME|CONT|PAUSE)\s+(\S+)`)
	// "--- FAIL: TestX (1.23s)", indented for subtests.
	verdict = regexp.MustCompile(`^\s*--- (FAIL|PASS|SKIP): (\S+)`)
	// The first line of a t.Log/t.Error entry: "    file_test.go:12: msg".
	entry = regexp.MustCompile(`^\s+\S+\.go:\d+: `)
	// Lines that end a test's output in non-verbose mode.
	boundary = regexp.MustCompile(`^(?:ok\s|FAIL|PASS|panic:|\?\s)`)
)

// Limits keep the digest short enough to survive CI's truncation.
const (
	maxLine     = 300
	maxPerTest  = 40
	maxFailures = 20
)

// failure is one failed test and its messages, in order.
type failure struct {
	name  string
	lines []string
}

// digest parses go test output and returns its failed tests with the
// first line of each message they logged, plus panics and timeouts.
func digest(r io.Reader) ([]failure, []string, error) {
	logs := map[string][]string{}
	var failed []string
	var extra []string
	current := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case marker.MatchString(line):
			current = marker.FindStringSubmatch(line)[1]
			continue
		case verdict.MatchString(line):
			m := verdict.FindStringSubmatch(line)
			if m[1] == "FAIL" {
				failed = append(failed, m[2])
			}
			// Non-verbose output logs a failed test's messages after its
			// verdict line.
			current = m[2]
			continue
		case strings.HasPrefix(line, "panic:"), strings.Contains(line, "test timed out after"):
			extra = append(extra, clip(line))
		}
		if boundary.MatchString(line) && !entry.MatchString(line) {
			current = ""
			continue
		}
		if current != "" && entry.MatchString(line) {
			logs[current] = append(logs[current], clip(strings.TrimSpace(line)))
		}
	}
	out := make([]failure, 0, len(failed))
	seen := map[string]bool{}
	for _, name := range failed {
		if seen[name] {
			continue
		}
		seen[name] = true
		l := logs[name]
		if len(l) > maxPerTest {
			l = append(l[:maxPerTest/2:maxPerTest/2], append([]string{fmt.Sprintf("... %d more ...", len(l)-maxPerTest)}, l[len(l)-maxPerTest/2:]...)...)
		}
		out = append(out, failure{name: name, lines: l})
	}
	return out, extra, sc.Err()
}

func clip(s string) string {
	if len(s) > maxLine {
		return s[:maxLine] + " …"
	}
	return s
}

// write prints the digest; nothing when nothing failed.
func write(w io.Writer, title string, fails []failure, extra []string) {
	if len(fails) == 0 && len(extra) == 0 {
		return
	}
	fmt.Fprintf(w, "---- %s: %d failed test(s)\n", title, len(fails))
	for i, f := range fails {
		if i == maxFailures {
			fmt.Fprintf(w, "... and %d more\n", len(fails)-maxFailures)
			break
		}
		fmt.Fprintf(w, "FAIL %s\n", f.name)
		for _, l := range f.lines {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	for _, l := range extra {
		fmt.Fprintf(w, "%s\n", l)
	}
}
