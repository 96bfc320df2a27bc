package flow

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// UserInput is one OneFlow/VM template user input, written as
// "M|type|description|params|default" (M mandatory, O optional).
type UserInput struct {
	Name        string `json:"name"`
	Mandatory   bool   `json:"mandatory,omitempty"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Params      string `json:"params,omitempty"`
	Default     string `json:"default,omitempty"`
}

// String renders the input in OneFlow's pipe syntax.
func (u UserInput) String() string {
	mo := "O"
	if u.Mandatory {
		mo = "M"
	}
	return strings.Join([]string{mo, u.Type, u.Description, u.Params, u.Default}, "|")
}

// Input types the CLI and Sunstone understand (network only in "networks").
var inputTypes = []string{
	"text", "text64", "password", "number", "number-float", "range",
	"range-float", "list", "list-multiple", "boolean", "fixed", "array",
}

var inputName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// ParseUserInput parses a "M|type|description|params|default" string. The
// CLI also accepts the short "M|type|description" form; warnings says so.
func ParseUserInput(name, s string) (u UserInput, warnings []string, err error) {
	u.Name = name
	f := strings.Split(s, "|")
	switch len(f) {
	case 5:
		u.Params, u.Default = f[3], f[4]
	case 3:
		warnings = append(warnings, "short form M|type|description: Sunstone expects 5 fields (M|type|description|params|default)")
	default:
		return u, nil, fmt.Errorf("%d |-separated fields, want 5: M|type|description|params|default", len(f))
	}
	switch f[0] {
	case "M":
		u.Mandatory = true
	case "O":
	default:
		return u, nil, fmt.Errorf("first field %q must be M (mandatory) or O (optional)", f[0])
	}
	u.Type, u.Description = f[1], f[2]
	w, err := u.check()
	return u, append(warnings, w...), err
}

// check validates the name, type, params and default; it returns warnings
// for what works but surprises (lower-case names, which Sunstone upper-cases).
func (u UserInput) check() (warnings []string, err error) {
	if !inputName.MatchString(u.Name) {
		return nil, fmt.Errorf("name %q: only letters, digits and _ are allowed", u.Name)
	}
	if u.Name != strings.ToUpper(u.Name) {
		warnings = append(warnings, fmt.Sprintf("name %q is not upper-case: Sunstone upper-cases it, so the value may reach the VM under another name", u.Name))
	}
	for _, f := range []string{u.Type, u.Description, u.Params, u.Default} {
		if strings.Contains(f, "|") {
			return warnings, fmt.Errorf("%q contains |, the field separator", f)
		}
	}
	if !slices.Contains(inputTypes, u.Type) {
		if u.Type == "network" {
			return warnings, fmt.Errorf("type network belongs in \"networks\", not in user inputs")
		}
		return warnings, fmt.Errorf("unknown type %q (want one of %s)", u.Type, strings.Join(inputTypes, ", "))
	}
	return warnings, u.checkParams()
}

func (u UserInput) checkParams() error {
	d := u.Default
	switch u.Type {
	case "number":
		if d != "" {
			if _, err := strconv.ParseInt(d, 10, 64); err != nil {
				return fmt.Errorf("default %q is not an integer", d)
			}
		}
	case "number-float":
		if d != "" && !isFloat(d) {
			return fmt.Errorf("default %q is not a number", d)
		}
	case "range", "range-float":
		lo, hi, ok := strings.Cut(u.Params, "..")
		isNum := isFloat
		if u.Type == "range" {
			isNum = isInt
		}
		if !ok || !isNum(lo) || !isNum(hi) {
			return fmt.Errorf("params %q: want min..max", u.Params)
		}
		l, _ := strconv.ParseFloat(lo, 64)
		h, _ := strconv.ParseFloat(hi, 64)
		if l > h {
			return fmt.Errorf("params %q: min is above max", u.Params)
		}
		if d != "" {
			v, err := strconv.ParseFloat(d, 64)
			if err != nil || !isNum(d) || v < l || v > h {
				return fmt.Errorf("default %q is outside %s", d, u.Params)
			}
		}
	case "list", "list-multiple":
		opts := strings.Split(u.Params, ",")
		if u.Params == "" || slices.Contains(opts, "") {
			return fmt.Errorf("params %q: want a comma-separated list of options", u.Params)
		}
		vals := []string{d}
		if u.Type == "list-multiple" {
			vals = strings.Split(d, ",")
		}
		for _, v := range vals {
			if d != "" && !slices.Contains(opts, v) {
				return fmt.Errorf("default %q is not one of %s", v, u.Params)
			}
		}
	case "boolean":
		if d != "" && d != "YES" && d != "NO" {
			return fmt.Errorf("default %q: a boolean is YES or NO", d)
		}
	}
	return nil
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

func isFloat(s string) bool {
	v, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(v, 0) && !math.IsNaN(v)
}
