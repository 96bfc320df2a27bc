package context

import "strings"

// A bootstrap token is a 6-character public ID, a dot and a 16-character
// secret over [a-z0-9] (k8s.io/cluster-bootstrap/token/api
// BootstrapTokenPattern). Text shown to people is matched whatever its case:
// a tool or a person may have upper-cased it on the way.
const (
	tokenIDLen     = 6
	tokenSecretLen = 16
	tokenLen       = tokenIDLen + 1 + tokenSecretLen
	// idGap is how many separators ("=", ": ", `" `) may stand between a
	// known token ID and its secret half for the half to count as next to it.
	idGap = 3
)

// MaskTokens hides in text, whatever the case of either, every bootstrap
// token or part of one a reader could use:
//
//   - each known secret whole (as Redact, ignoring case); for a known
//     token also its secret half anywhere, and a 16-character run that
//     follows its ID ("abcdef:0123…", "abcdef0123…");
//   - anything shaped like a token, "[a-z0-9]{6}.[a-z0-9]{16}";
//   - any run of exactly 16 letters and digits standing alone, the secret
//     half of a token nobody here knows (an older one, another cluster's).
//     A run counts within one case too, so "A0123456789abcdef" loses its
//     lower-case tail.
//
// It is the one filter for every value a VM publishes before status shows
// it (onekube-flow status, onekube-agent status). The last rule costs the
// odd 16-letter word; a token ID on its own stays, as kubeadm names tokens
// by it.
func MaskTokens(text string, known ...Secret) string {
	lower := asciiLower(text)
	var hide []bool // by byte; nil until something is found
	mark := func(i, j int) {
		if hide == nil {
			hide = make([]bool, len(text))
		}
		for k := i; k < j; k++ {
			hide[k] = true
		}
	}
	for _, s := range known {
		k := asciiLower(s.v)
		if len(k) < 4 { // as Redact: shorter values would mask innocent text
			continue
		}
		markEach(lower, k, mark)
		if isToken(k) {
			markEach(lower, k[tokenIDLen+1:], mark)
			markAfterID(lower, k[:tokenIDLen], mark)
		}
	}
	markShaped(lower, mark)
	markRuns(text, isAlnum, mark)
	markRuns(text, isLowerAlnum, mark)
	markRuns(text, isUpperAlnum, mark)
	if hide == nil {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); i++ {
		if !hide[i] {
			b.WriteByte(text[i])
		} else if i == 0 || !hide[i-1] {
			b.WriteString(Mask)
		}
	}
	return b.String()
}

// markEach marks every occurrence of sub in s.
func markEach(s, sub string, mark func(i, j int)) {
	for from := 0; ; {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return
		}
		from += i
		mark(from, from+len(sub))
		from++
	}
}

// markAfterID marks a 16-character run that follows id after at most
// idGap separators.
func markAfterID(s, id string, mark func(i, j int)) {
	for from := 0; ; {
		i := strings.Index(s[from:], id)
		if i < 0 {
			return
		}
		j := from + i + len(id)
		from += i + 1
		for k := 0; k < idGap && j < len(s) && !isAlnum(s[j]); k++ {
			j++
		}
		end := j + tokenSecretLen
		if end <= len(s) && allOf(s[j:end], isAlnum) && (end == len(s) || !isAlnum(s[end])) {
			mark(j, end)
		}
	}
}

// markShaped marks each token-shaped string in s (lower-cased).
func markShaped(s string, mark func(i, j int)) {
	for i := tokenIDLen; i+tokenSecretLen < len(s); i++ {
		if s[i] == '.' && allOf(s[i-tokenIDLen:i], isLowerAlnum) && allOf(s[i+1:i+1+tokenSecretLen], isLowerAlnum) {
			mark(i-tokenIDLen, i+1+tokenSecretLen)
		}
	}
}

// markRuns marks each maximal run of bytes in class that is exactly a
// secret half long.
func markRuns(s string, class func(byte) bool, mark func(i, j int)) {
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && class(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start == tokenSecretLen {
			mark(start, i)
		}
		start = -1
	}
}

// isToken reports whether s (lower-cased) is exactly a bootstrap token.
func isToken(s string) bool {
	return len(s) == tokenLen && s[tokenIDLen] == '.' &&
		allOf(s[:tokenIDLen], isLowerAlnum) && allOf(s[tokenIDLen+1:], isLowerAlnum)
}

// asciiLower lower-cases ASCII letters only, so byte offsets into the
// result are offsets into s.
func asciiLower(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

func allOf(s string, class func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !class(s[i]) {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
func isUpperAlnum(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
func isAlnum(c byte) bool      { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }
