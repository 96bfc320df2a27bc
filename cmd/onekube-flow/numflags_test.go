package main

import (
	"strings"
	"testing"
)

// TestNumberFlags: every numeric flag is decimal only; pflag's own parsers
// read "010" as 8, "0x10" as 16 and take NaN, Inf and 1e-300.
func TestNumberFlags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{[]string{"--workers", "010"}, 2, "", `invalid argument "010" for "--workers" flag: leading zeros are not allowed`},
		{[]string{"--masters", "03"}, 2, "", `"--masters" flag: leading zeros`},
		{[]string{"--workers", "0x10"}, 2, "", `"0x10" for "--workers" flag: hexadecimal, octal and binary are not accepted`},
		{[]string{"--worker-memory", "0o17"}, 2, "", "hexadecimal, octal and binary"},
		{[]string{"--api-port", "0b1"}, 2, "", "hexadecimal, octal and binary"},
		{[]string{"--api-port", "6_443"}, 2, "", "without _ separators"},
		{[]string{"--worker-memory", "4096.5"}, 2, "", `"4096.5" for "--worker-memory" flag: want a whole number`},
		{[]string{"--network-id", "+3"}, 2, "", "want a decimal integer"},
		{[]string{"--network-id", " 3"}, 2, "", "want a decimal integer"},
		{[]string{"--master-template-id", "99999999999999999999"}, 2, "", "out of range"},
		{[]string{"--master-cpu", "NaN"}, 2, "", `"NaN" for "--master-cpu" flag: not a finite number`},
		{[]string{"--master-cpu", "-Inf"}, 2, "", "not a finite number"},
		{[]string{"--worker-cpu", "+inf"}, 2, "", "not a finite number"},
		{[]string{"--master-cpu", "1e-300"}, 2, "", `"1e-300" for "--master-cpu" flag: exponents are not accepted`},
		{[]string{"--master-cpu", "1E2"}, 2, "", "exponents"},
		{[]string{"--master-cpu", "0x1p-2"}, 2, "", "hexadecimal"},
		{[]string{"--master-cpu", ".5"}, 2, "", "want a decimal number"},
		{[]string{"--master-cpu", strings.Repeat("1", 41)}, 2, "", "too long for a number"},
		{[]string{"--workers", "10", "--workers-max", "20", "--master-cpu", "0.5", "--worker-cpu", "2.25"}, 0, `"cardinality": 10`, ""},
		{[]string{"--master-cpu", "0.5"}, 0, `"CPU": "0.5"`, ""},
		{[]string{"--master-template-id", "0", "--workers", "0"}, 0, `"template_id": 0`, ""},
		{[]string{"--network-id", "-1"}, 1, "", "network.id: -1 is not a virtual network ID"},
		// Decimal, yet not a CPU share oned accounts for; and a name
		// through a flag gets the spec's text checks.
		{[]string{"--master-cpu", "0.001"}, 1, "", "master.cpu: 0.001: want at least 0.01"},
		{[]string{"--worker-cpu", "0.125"}, 1, "", "worker.cpu: 0.125: at most two decimals"},
		{[]string{"--name", "k8s\x1b[2J"}, 1, "", `metadata.name: "k8s\x1b[2J": OpenNebula names cannot contain the control character '\x1b'`},
		{[]string{"--description", "k8s\x00"}, 1, "", `metadata.description: control character '\x00' at byte 3`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, "", nil, append([]string{"render"}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.inStdout) || !strings.Contains(errs, tc.inStderr) {
				t.Errorf("code %d (want %d)\nstdout: %.300s\nstderr: %s", code, tc.code, out, errs)
			}
		})
	}
}
