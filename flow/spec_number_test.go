package flow

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	decimalIntRE   = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	decimalFloatRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)
)

func TestParseDecimal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		integer int
		float   float64
		intErr  string // "" = accepted
		fltErr  string
	}{
		{in: "0"},
		{in: "-0"},
		{in: "12", integer: 12, float: 12},
		{in: "-1", integer: -1, float: -1},
		{in: "0.5", float: 0.5, intErr: "want a whole number"},
		{in: "2.25", float: 2.25, intErr: "want a whole number"},
		{in: "010", intErr: "leading zeros", fltErr: "leading zeros"},
		{in: "00.5", intErr: "want a whole number", fltErr: "leading zeros"},
		{in: "0x10", intErr: "hexadecimal", fltErr: "hexadecimal"},
		{in: "-0X1A", intErr: "hexadecimal", fltErr: "hexadecimal"},
		{in: "0o7", intErr: "hexadecimal", fltErr: "hexadecimal"},
		{in: "0b1", intErr: "hexadecimal", fltErr: "hexadecimal"},
		{in: "1e3", intErr: "exponents", fltErr: "exponents"},
		{in: "1e-300", intErr: "exponents", fltErr: "exponents"},
		{in: "NaN", intErr: "not a finite", fltErr: "not a finite"},
		{in: "-Infinity", intErr: "not a finite", fltErr: "not a finite"},
		{in: "-.inf", intErr: "not a finite", fltErr: "not a finite"},
		{in: "1_000", intErr: "_ separators", fltErr: "_ separators"},
		{in: "", intErr: "empty", fltErr: "empty"},
		{in: "-", intErr: "want a decimal integer", fltErr: "want a decimal number"},
		{in: "+1", intErr: "want a decimal integer", fltErr: "want a decimal number"},
		{in: "1.", intErr: "want a decimal integer", fltErr: "want a decimal number"},
		{in: ".5", intErr: "want a decimal integer", fltErr: "want a decimal number"},
		{in: " 1", intErr: "want a decimal integer", fltErr: "want a decimal number"},
		{in: "١", intErr: "want a decimal integer", fltErr: "want a decimal number"},
		{in: "9223372036854775808", intErr: "out of range", float: 9223372036854775808},
		{in: strings.Repeat("9", 41), intErr: "too long", fltErr: "too long"},
	} {
		n, err := ParseDecimalInt(tc.in)
		if tc.intErr == "" && (err != nil || n != tc.integer) || tc.intErr != "" && (err == nil || !strings.Contains(err.Error(), tc.intErr)) {
			t.Errorf("ParseDecimalInt(%q) = %d, %v; want %d or an error with %q", tc.in, n, err, tc.integer, tc.intErr)
		}
		f, err := ParseDecimalFloat(tc.in)
		if tc.fltErr == "" && (err != nil || f != tc.float) || tc.fltErr != "" && (err == nil || !strings.Contains(err.Error(), tc.fltErr)) {
			t.Errorf("ParseDecimalFloat(%q) = %g, %v; want %g or an error with %q", tc.in, f, err, tc.float, tc.fltErr)
		}
	}
}

// FuzzNumberFlags: the strict parsers accept exactly the decimal grammar
// (within maxNumberLen) and agree with strconv on what they accept.
func FuzzNumberFlags(f *testing.F) {
	for _, s := range []string{"0", "-0", "12", "0.5", "010", "0x10", "1e-300", "NaN", "Inf", "1_0", ".5", "1.", "+3",
		"9223372036854775807", "9223372036854775808", "0.01", "-", "٣", "1e", "0o", "00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ierr := ParseDecimalInt(s)
		x, ferr := ParseDecimalFloat(s)
		for _, err := range []error{ierr, ferr} {
			if err != nil && (len(err.Error()) > 200 || len(s) > 3 && strings.Contains(err.Error(), s)) {
				t.Fatalf("%q: error %q repeats the input or is long", s, err)
			}
		}
		short := len(s) <= maxNumberLen
		if ierr == nil {
			if !decimalIntRE.MatchString(s) || !short {
				t.Fatalf("ParseDecimalInt accepted %q", s)
			}
			if want := strings.TrimPrefix(s, "-"); strconv.Itoa(n) != s && !(n == 0 && s == "-0") && strconv.Itoa(-n) != want {
				t.Fatalf("ParseDecimalInt(%q) = %d", s, n)
			}
		} else if short && decimalIntRE.MatchString(s) {
			if _, err := strconv.ParseInt(s, 10, strconv.IntSize); err == nil {
				t.Fatalf("ParseDecimalInt refused %q: %v", s, ierr)
			}
		}
		if ferr == nil {
			if !decimalFloatRE.MatchString(s) || !short || math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("ParseDecimalFloat accepted %q as %g", s, x)
			}
			if want, _ := strconv.ParseFloat(s, 64); want != x {
				t.Fatalf("ParseDecimalFloat(%q) = %g, strconv says %g", s, x, want)
			}
		} else if short && decimalFloatRE.MatchString(s) {
			t.Fatalf("ParseDecimalFloat refused %q: %v", s, ferr)
		}
		if ierr == nil && ferr != nil {
			t.Fatalf("%q is an integer but not a number: %v", s, ferr)
		}
	})
}
