package main

import (
	"bytes"
	"fmt"
	"os"
)

// The block of docs/measured.md that `make bench-readme` owns.
const (
	beginMarker = "<!-- bench-report:begin -->"
	endMarker   = "<!-- bench-report:end -->"
)

// rewriteReadme replaces the block between the markers of the file at
// path with report.
func rewriteReadme(path, report string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := replaceBlock(old, report)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, updated, 0o644)
}

// replaceBlock puts report between the markers, each on a line of its own,
// keeping the markers and everything outside them.
func replaceBlock(doc []byte, report string) ([]byte, error) {
	begin := bytes.Index(doc, []byte(beginMarker))
	end := bytes.Index(doc, []byte(endMarker))
	switch {
	case begin < 0 || end < 0:
		return nil, fmt.Errorf("no %s … %s block", beginMarker, endMarker)
	case end < begin:
		return nil, fmt.Errorf("%s comes before %s", endMarker, beginMarker)
	case bytes.Count(doc, []byte(beginMarker)) > 1 || bytes.Count(doc, []byte(endMarker)) > 1:
		return nil, fmt.Errorf("more than one bench-report block")
	}
	var b bytes.Buffer
	b.Write(doc[:begin+len(beginMarker)])
	b.WriteString("\n")
	b.WriteString(report)
	if len(report) > 0 && report[len(report)-1] != '\n' {
		b.WriteString("\n")
	}
	b.Write(doc[end:])
	return b.Bytes(), nil
}
