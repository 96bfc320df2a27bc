package main

import (
	"fmt"
	"os"
)

// Usage: faildigest FILE... ; each file is one `go test` run's output.
func main() {
	rc := 0
	for _, path := range os.Args[1:] {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "faildigest: %v\n", err)
			rc = 1
			continue
		}
		fails, extra, err := digest(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "faildigest: %s: %v\n", path, err)
			rc = 1
		}
		write(os.Stdout, path, fails, extra)
	}
	os.Exit(rc)
}
