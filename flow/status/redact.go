package status

import (
	"reflect"
	"strings"
	"unicode/utf8"

	vmcontext "github.com/onekube/onekube/context"
)

// MaxValue bounds, in bytes, each text a VM gave (a published key, its
// name, why it could not be read) as status shows it, table and --json
// alike: an agent's error is a few hundred bytes, while a broken or hostile
// VM may publish megabytes, which a 50-VM --json would otherwise repeat.
const MaxValue = 4 << 10

// CutMark ends a value cut to MaxValue. It has no space, so a cut list
// (ONEGATE_K8S_WAITING) still splits into its items and the mark.
const CutMark = "…[cut]"

// maxTokenTail is how much of a token a cut can leave at the end of a
// value: all of it but one byte.
const maxTokenTail = 22

// bound cuts s to MaxValue bytes, CutMark included, on a rune boundary.
// Letters, digits and dots just before the cut are dropped as well (at most
// a token's length), so a token the cut splits cannot escape masking as a
// fragment. bound(bound(s)) == bound(s); the result never shares memory
// with a long s, so a VM's 10 MB document is not kept alive.
func bound(s string) string {
	if len(s) <= MaxValue {
		return s
	}
	n := MaxValue - len(CutMark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	for k := 0; k < maxTokenTail && n > 0 && tokenByte(s[n-1]); k++ {
		n--
	}
	return strings.Clone(s[:n]) + CutMark
}

func tokenByte(c byte) bool {
	return c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// redact bounds and masks (vmcontext.MaskTokens, with the tokens masters
// published) every text field of v, nested ones included: every field is
// walked, so one added later cannot be forgotten.
func (v VM) redact(tokens ...vmcontext.Secret) VM {
	eachString(reflect.ValueOf(&v).Elem(), func(s string) string {
		return vmcontext.MaskTokens(bound(s), tokens...)
	})
	return v
}

// redact bounds and masks the names OneFlow gave, as a VM's texts are:
// whoever wrote the service template chose them.
func (s Service) redact() Service {
	s.Name = vmcontext.MaskTokens(bound(s.Name))
	s.Roles = append([]Role(nil), s.Roles...)
	for i := range s.Roles {
		s.Roles[i].Name = vmcontext.MaskTokens(bound(s.Roles[i].Name))
	}
	return s
}

// eachString replaces every string field of the struct v (and each string
// of a []string field), recursing into struct fields, with f of it.
func eachString(v reflect.Value, f func(string) string) {
	for i := range v.NumField() {
		switch fv := v.Field(i); fv.Kind() {
		case reflect.String:
			if s := fv.String(); s != "" {
				fv.SetString(f(s))
			}
		case reflect.Struct:
			eachString(fv, f)
		case reflect.Slice:
			if fv.Type().Elem().Kind() == reflect.String {
				for j := range fv.Len() {
					fv.Index(j).SetString(f(fv.Index(j).String()))
				}
			}
		}
	}
}
