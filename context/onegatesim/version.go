package onegatesim

import (
	"fmt"
	"strconv"
	"strings"
)

// version is an OpenNebula release as major.minor; the server's behaviour
// changed at a few of them (reference onegate.md §6).
type version struct{ major, minor int }

// DefaultVersion is the OpenNebula release simulated when Options.Version is empty.
const DefaultVersion = "7.4"

func parseVersion(s string) (version, error) {
	if s == "" {
		s = DefaultVersion
	}
	maj, min, ok := strings.Cut(strings.TrimSpace(s), ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil || a < 5 || a > 7 || b < 0 {
		return version{}, fmt.Errorf("parsing version %q: want 5.10 .. 7.x as major.minor", s)
	}
	v := version{a, b}
	if v.less(5, 10) {
		return version{}, fmt.Errorf("parsing version %q: releases before 5.10 are not simulated", s)
	}
	return v, nil
}

func (v version) less(major, minor int) bool {
	return v.major < major || (v.major == major && v.minor < minor)
}

func (v version) atLeast(major, minor int) bool { return !v.less(major, minor) }

func (v version) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// Feature gates, one per behaviour that moved between releases.

// shortService: 5.12 (F#4132) reduced nodes[].vm_info to six fields and made
// running null; earlier servers filtered the full VM through build_vm_hash.
func (v version) shortService() bool { return v.atLeast(5, 12) }

// escapes: 5.12 added escape_attr to PUT bodies; 6.0 stopped quoting every '='.
func (v version) escapes() bool      { return v.atLeast(5, 12) }
func (v version) escapeEqOnce() bool { return v.atLeast(6, 0) }

// catchAll: 6.0 answers unknown routes with 400 instead of Sinatra's 404.
func (v version) catchAll() bool { return v.atLeast(6, 0) }

// selfLookup: 6.0 returns the VM itself from /vms/:id without service checks.
func (v version) selfLookup() bool { return v.atLeast(6, 0) }

// nicNames: 5.12 added NAME/PARENT and NIC_ALIAS, 6.0 EXTERNAL/EXTERNAL_IP.
func (v version) nicNames() bool { return v.atLeast(5, 12) }

// readyCaseInsensitive: before 5.12 OneFlow compared READY to YES ignoring case.
func (v version) readyCaseInsensitive() bool { return v.less(5, 12) }

// defaultCardinality: the validator's default for a role without one.
func (v version) defaultCardinality() int {
	if v.less(6, 10) {
		return 1
	}
	return 0
}

// rack3: 7.0 moved OneGate to Sinatra 4 on Rack 3, whose params parser
// reads a form-typed body (urlencoded, or a POST without Content-Type) and,
// unlike Rack 2, does not rewind it: a route that then reads request.body
// gets "". The scale and action routes never rewind (up to 7.4 and master).
func (v version) rack3() bool { return v.atLeast(7, 0) }

// updateRewinds: 7.2 made the update helper rewind before reading a raw
// body (one#7239, commit e2c12314).
func (v version) updateRewinds() bool { return v.atLeast(7, 2) }

// errorHandler500: 7.2 added the server's "error 500" block (one#7251).
func (v version) errorHandler500() bool { return v.atLeast(7, 2) }

// flow7 reports whether OneFlow speaks the 7.x template keys natively.
func (v version) flow7() bool { return v.atLeast(7, 0) }
