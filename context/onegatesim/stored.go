package onegatesim

import (
	"errors"
	"strconv"
)

// StoredValues runs a form-encoded PUT /vm body (data=...&type=1) through
// what the server of the given OpenNebula release does to it, without HTTP:
// Rack's form parsing, escape_attr (5.12+) and oned's template parser. It
// returns the scalar attributes the update would store. It exists so a
// client's encoder can be property-tested against the same emulation the
// simulator serves (see context/onegate's round-trip fuzz test).
func StoredValues(version, body string) (map[string]string, error) {
	v, err := parseVersion(version)
	if err != nil {
		return nil, err
	}
	ps := map[string]rackParam{}
	parseRack(body, ps)
	data, typ := ps["data"], ps["type"]
	if !data.present || data.isNil {
		return nil, errors.New("no data field")
	}
	if typ.present && !typ.isNil && rubyToI(typ.value) != 1 {
		return nil, errors.New("type " + strconv.Quote(typ.value) + " is not a merge")
	}
	text := data.value
	if v.escapes() {
		if text, err = escapeAttr(text, v.escapeEqOnce()); err != nil {
			return nil, err
		}
	}
	attrs, err := parseTemplate(text)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(attrs))
	for _, a := range attrs {
		if !a.isVector() {
			out[a.name] = a.value
		}
	}
	return out, nil
}
