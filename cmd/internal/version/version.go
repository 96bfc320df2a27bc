// Package version holds the build's version, stamped by the Makefile with
// -ldflags "-X github.com/onekube/onekube/cmd/internal/version.Version=...".
package version

import "runtime/debug"

// Version is set at link time; a plain `go build` falls back to the module
// version recorded by the Go toolchain, or "devel".
var Version = ""

// String returns the version to print.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
