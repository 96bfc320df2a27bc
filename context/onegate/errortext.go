package onegate

import (
	"html"
	"mime"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	vmcontext "github.com/onekube/onekube/context"
)

// maxErrorText bounds the server's part of an error's text.
const maxErrorText = 200

// withheld replaces a server message that echoed any part of the token.
const withheld = "(the server's message echoed this VM's token; withheld)"

// errorText turns the start of a non-2xx answer's body into one short line
// for Error.Body: the <title> of an HTML page, else the message with its
// lines joined, bounded, printable, without the token. The 6.10.5 OneGate runs in
// Sinatra's development mode (its systemd unit sets no environment), and
// its answer to an unhandled error is a ~124 KB debug page whose rack env
// table echoes X-ONEGATE-TOKEN, HTML-escaped; the body may also be cut
// mid-token by the read limit. Masking the exact token misses both, so a
// message holding any 8-character part of the token, raw, HTML-unescaped
// or percent-decoded, is withheld whole.
func errorText(contentType string, body []byte, token vmcontext.Secret) string {
	s := strings.ToValidUTF8(string(body), "?")
	if isHTML(contentType, s) {
		s = htmlTitle(s)
	}
	s = vmcontext.Redact(s, token)
	s = strings.Join(strings.Fields(strings.Map(printable, s)), " ")
	if echoes(s, token.Reveal()) {
		return withheld
	}
	return bound(s, maxErrorText)
}

// isHTML says whether the answer is a page rather than a message.
func isHTML(contentType, s string) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	head := strings.ToLower(strings.TrimSpace(s[:min(len(s), 64)]))
	return strings.HasPrefix(head, "<!doctype") || strings.HasPrefix(head, "<html")
}

// htmlTitle is the text of a page's <title>, or a mention of the page.
func htmlTitle(s string) string {
	lower := strings.ToLower(s)
	start := strings.Index(lower, "<title")
	if start >= 0 {
		if gt := strings.IndexByte(lower[start:], '>'); gt >= 0 {
			start += gt + 1
			if end := strings.Index(lower[start:], "</title"); end >= 0 {
				if t := strings.TrimSpace(html.UnescapeString(s[start : start+end])); t != "" {
					return firstLine(t) + " (HTML page)"
				}
			}
		}
	}
	return "an HTML page"
}

func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// printable keeps a log line one line and free of terminal escapes.
func printable(r rune) rune {
	if unicode.IsPrint(r) {
		return r
	}
	return ' '
}

// echoes reports whether s shows any 8-character part of token (all of a
// shorter one), raw, HTML-unescaped or percent-decoded.
func echoes(s, token string) bool {
	if len(token) < 4 { // as vmcontext.Redact: shorter would match innocent text
		return false
	}
	forms := []string{s, html.UnescapeString(s)}
	if u, err := url.QueryUnescape(s); err == nil {
		forms = append(forms, u)
	}
	if u, err := url.PathUnescape(s); err == nil {
		forms = append(forms, u)
	}
	n := min(8, len(token))
	for i := 0; i+n <= len(token); i++ {
		for _, f := range forms {
			if strings.Contains(f, token[i:i+n]) {
				return true
			}
		}
	}
	return false
}

// bound cuts s to at most n bytes on a rune boundary.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
