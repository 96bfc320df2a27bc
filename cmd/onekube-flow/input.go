package main

import (
	"fmt"
	"io"
	"os"
)

// maxInput bounds a file or stdin read by any command: a service template
// of 20 000 roles is about 2 MB, and /dev/zero must not exhaust memory.
const maxInput = 64 << 20

// readInput reads name ("-" is stdin) through a.readFile, refusing more
// than maxInput bytes.
func (a *app) readInput(name string) ([]byte, error) {
	if name == "-" {
		return readLimited(a.stdin, "stdin")
	}
	return a.readFile(name)
}

// readFileLimited is os.ReadFile with the maxInput bound.
func readFileLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, name)
}

func readLimited(r io.Reader, name string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("%s is larger than %d MiB", name, maxInput>>20)
	}
	return b, nil
}
