package register

import (
	"encoding/base64"
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	vmcontext "github.com/onekube/onekube/context"
)

// maxExcerpt is how much of a server's text an error message quotes.
const maxExcerpt = 200

var (
	// basicAuth is an echoed Authorization header's value, whoever's.
	basicAuth = regexp.MustCompile(`(?i)\b(basic|bearer)(\s+)([A-Za-z0-9+/=._~-]{8,})`)
	htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	htmlTag   = regexp.MustCompile(`(?s)<[^>]*>`)
	looksHTML = regexp.MustCompile(`(?i)<(!doctype\s+html|html|head|body)\b`)
)

// redactAuth masks user's password wherever text echoes it: in clear, as
// user:password, as its Basic-auth base64 form, and any Authorization
// header value at all.
func redactAuth(text, user string, password vmcontext.Secret) string {
	secrets := []vmcontext.Secret{password}
	if !password.IsZero() {
		pair := user + ":" + password.Reveal()
		secrets = append(secrets,
			vmcontext.NewSecret(base64.StdEncoding.EncodeToString([]byte(pair))),
			vmcontext.NewSecret(base64.RawStdEncoding.EncodeToString([]byte(pair))))
	}
	text = vmcontext.Redact(text, secrets...)
	return basicAuth.ReplaceAllStringFunc(text, func(m string) string {
		sub := basicAuth.FindStringSubmatch(m)
		// A credential has an upper-case letter, a digit or a base64
		// sign; "basic requirements" is prose.
		if !strings.ContainsAny(sub[3], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=") {
			return m
		}
		return sub[1] + sub[2] + vmcontext.Mask
	})
}

// excerpt turns a server's answer into a short, printable, one-line quote:
// an HTML page becomes its title (or its text), control characters and
// runs of blanks become one space, and anything past maxExcerpt characters
// is cut. Redact before calling: the cut must not leave half a secret.
func excerpt(body string) string {
	if looksHTML.MatchString(body) {
		if m := htmlTitle.FindStringSubmatch(body); m != nil && strings.TrimSpace(m[1]) != "" {
			body = m[1]
		} else {
			body = htmlTag.ReplaceAllString(body, " ")
		}
		body = html.UnescapeString(body)
	}
	return oneLine(body, maxExcerpt)
}

// oneLine makes s valid UTF-8 on one line, blanks collapsed, at most n
// characters (an ellipsis marks a cut).
func oneLine(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case !unicode.IsPrint(r):
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
