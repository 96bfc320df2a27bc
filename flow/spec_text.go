package flow

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// nameFields are checked by checkObjectName, which refuses control
// characters itself; the text check skips them so each gets one message.
var nameFields = map[string]bool{
	"metadata.name":       true,
	"master.templateName": true,
	"worker.templateName": true,
	"kubernetes.address":  true, // a CIDR or a virtual network name
}

// multiLine are free texts where a line break or a tab is fine.
var multiLine = map[string]bool{"metadata.description": true}

// checkSpecText refuses control characters and invalid UTF-8 in every
// string of the spec, by path: they are invisible in Sunstone and the CLI,
// and oned keeps templates as XML, which cannot carry most C0 controls.
// The walk covers every field, so a new one is checked too.
func checkSpecText(ps *problems, s Spec) {
	walkStrings(reflect.ValueOf(s), "", func(path, v string) {
		if nameFields[path] {
			return
		}
		if i, r, bad := badText(v, multiLine[path]); bad {
			if r == utf8.RuneError {
				ps.errorf(path, "invalid UTF-8 at byte %d", i)
			} else {
				ps.errorf(path, "control character %q at byte %d", r, i)
			}
		}
	})
}

// badText finds the first control character (C0, DEL, C1; tab and line
// feed allowed when multiLine) or invalid UTF-8 byte in s.
func badText(s string, multiLine bool) (int, rune, bool) {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return i, r, true
			}
		case multiLine && (r == '\n' || r == '\t'):
		case unicode.IsControl(r):
			return i, r, true
		}
	}
	return 0, 0, false
}

// walkStrings calls f with the JSON path of every string in v.
func walkStrings(v reflect.Value, path string, f func(path, s string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkStrings(v.Elem(), path, f)
		}
	case reflect.String:
		f(path, v.String())
	case reflect.Slice:
		for i := range v.Len() {
			walkStrings(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" || !t.Field(i).IsExported() {
				continue
			}
			walkStrings(v.Field(i), joinPath(path, name), f)
		}
	}
}
