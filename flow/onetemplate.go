package flow

import (
	"fmt"
	"strings"
)

// oneAttr is one attribute of an OpenNebula template: a single value, or a
// vector (NIC = [ ... ]) when Vector is non-nil.
type oneAttr struct {
	Key    string
	Value  string
	Vector []oneAttr
}

// oneTemplate is OpenNebula template text (what onetemplate create and
// one.template.allocate read), kept as ordered attributes.
type oneTemplate []oneAttr

func pair(k, v string) oneAttr               { return oneAttr{Key: k, Value: v} }
func vector(k string, as ...oneAttr) oneAttr { return oneAttr{Key: k, Vector: as} }

// text renders the template, one attribute per line, vectors indented.
func (t oneTemplate) text() (string, error) {
	var b strings.Builder
	for _, a := range t {
		if err := checkKey(a.Key); err != nil {
			return "", err
		}
		if a.Vector == nil {
			q, err := quoteValue(a.Value)
			if err != nil {
				return "", fmt.Errorf("%s: %w", a.Key, err)
			}
			fmt.Fprintf(&b, "%s = %s\n", a.Key, q)
			continue
		}
		fmt.Fprintf(&b, "%s = [", a.Key)
		for i, p := range a.Vector {
			if err := checkKey(p.Key); err != nil {
				return "", fmt.Errorf("%s: %w", a.Key, err)
			}
			q, err := quoteValue(p.Value)
			if err != nil {
				return "", fmt.Errorf("%s/%s: %w", a.Key, p.Key, err)
			}
			sep := ","
			if i == len(a.Vector)-1 {
				sep = " ]"
			}
			fmt.Fprintf(&b, "\n  %s = %s%s", p.Key, q, sep)
		}
		if len(a.Vector) == 0 {
			b.WriteString(" ]")
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}

func checkKey(k string) error {
	if !inputName.MatchString(k) {
		return fmt.Errorf("attribute name %q: only letters, digits and _ are allowed", k)
	}
	return nil
}

// quoteValue double-quotes v for oned's template parser, which knows one
// escape only: \" for a quote. A trailing backslash would escape the closing
// quote and "]]>" switches the lexer to CDATA, so both are refused.
func quoteValue(v string) (string, error) {
	if strings.HasSuffix(v, `\`) {
		return "", fmt.Errorf("value %q ends with a backslash, which OpenNebula's template syntax cannot quote", v)
	}
	if strings.Contains(v, "]]>") {
		return "", fmt.Errorf("value %q contains ]]>, which OpenNebula's template parser rejects", v)
	}
	return `"` + strings.ReplaceAll(v, `"`, `\"`) + `"`, nil
}
