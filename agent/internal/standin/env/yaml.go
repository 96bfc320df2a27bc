package env

import "strings"

// SplitDocuments splits a YAML stream on "---" lines, dropping documents that
// hold only blanks and comments, as kubeadm and kubectl do.
func SplitDocuments(b []byte) [][]byte {
	var docs [][]byte
	var cur []string
	flush := func() {
		for _, l := range cur {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				docs = append(docs, []byte(strings.Join(cur, "\n")+"\n"))
				break
			}
		}
		cur = cur[:0]
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimRight(line, " \t\r") == "---" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return docs
}
