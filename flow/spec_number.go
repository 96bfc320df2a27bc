package flow

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Numbers in a spec or a flag are read as a person writes them: decimal
// digits, an optional leading "-" and, where a fraction makes sense, "."
// and digits. strconv with base 0 and YAML 1.1 read "010" as 8 and "0x10"
// as 16, and floats take "1e-300", "NaN" and "Inf": each of those is a typo
// more often than a wish, and it would silently reach OneFlow.

// maxNumberLen bounds a number's text: a count or a size needs a dozen
// digits, CPU three decimals at most.
const maxNumberLen = 40

// ParseDecimalInt reads a decimal integer (e.g. "12", "-1"); see
// checkDecimal for what is refused.
func ParseDecimalInt(s string) (int, error) {
	if err := checkDecimal(s, false); err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, strconv.IntSize)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return int(n), nil
}

// ParseDecimalFloat reads a decimal number with an optional fraction (e.g.
// "0.5", "2"); see checkDecimal for what is refused.
func ParseDecimalFloat(s string) (float64, error) {
	if err := checkDecimal(s, true); err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, errors.New("out of range")
	}
	return f, nil
}

// checkDecimal accepts -?(0|[1-9][0-9]*), followed, if frac, by an
// optional \.[0-9]+. Its errors say what the text looks like instead and
// do not repeat it (callers name the flag or field and quote the value).
func checkDecimal(s string, frac bool) error {
	if len(s) > maxNumberLen {
		return errors.New("too long for a number")
	}
	body := strings.TrimPrefix(s, "-")
	whole, fraction, dot := strings.Cut(body, ".")
	if digits(whole) && (!dot || frac && digits(fraction)) {
		if len(whole) > 1 && whole[0] == '0' {
			return errors.New("leading zeros are not allowed (YAML and C read 010 as octal 8): write the number in decimal without them")
		}
		return nil
	}
	lower := strings.ToLower(body)
	word := strings.TrimPrefix(strings.TrimPrefix(lower, "+"), ".") // YAML spells them .nan, .inf
	switch {
	case s == "":
		return errors.New("empty: want a decimal number")
	case dot && !frac && digits(whole) && digits(fraction):
		return errors.New("want a whole number")
	case len(lower) > 1 && lower[0] == '0' && strings.ContainsRune("xob", rune(lower[1])):
		return errors.New("hexadecimal, octal and binary are not accepted: write the number in decimal")
	case word == "nan" || word == "inf" || word == "infinity":
		return errors.New("not a finite number")
	case strings.Contains(lower, "e") && strings.Trim(lower, "0123456789.e+-") == "":
		return errors.New("exponents are not accepted: write the number in decimal, e.g. 0.5")
	case strings.Contains(body, "_"):
		return errors.New("write the number without _ separators")
	}
	if frac {
		return errors.New("want a decimal number: digits, an optional leading - and an optional fraction such as 0.5")
	}
	return errors.New("want a decimal integer: digits and an optional leading -")
}

// digits reports a non-empty run of ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
