package status

import (
	"regexp"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// bootstrapToken is kubeadm's token format, "[a-z0-9]{6}.[a-z0-9]{16}"
// (k8s.io/cluster-bootstrap/token/api BootstrapTokenPattern), unanchored:
// a token inside any text.
var bootstrapToken = regexp.MustCompile(`[a-z0-9]{6}\.[a-z0-9]{16}`)

// secretHalfLen is the length of a token's secret half, the part after
// the dot: with the token ID (public) it is the whole credential.
const secretHalfLen = 16

// tokenSecrets returns the secrets to mask for a token a master published:
// the token and, on its own, its secret half.
func tokenSecrets(token vmcontext.Secret) []vmcontext.Secret {
	if token.IsZero() {
		return nil
	}
	out := []vmcontext.Secret{token}
	if _, half, ok := strings.Cut(token.Reveal(), "."); ok && half != "" {
		out = append(out, vmcontext.NewSecret(half))
	}
	return out
}

// maskTokens masks in text every known secret, every string shaped like a
// bootstrap token, and, when halves is set, every run of exactly 16
// lower-case letters and digits standing alone: the secret half of a token
// nobody published (an old one, another cluster's) looks just like that.
// halves is for free text (an agent's error); names keep their words.
func maskTokens(text string, halves bool, known ...vmcontext.Secret) string {
	text = vmcontext.Redact(text, known...)
	text = bootstrapToken.ReplaceAllLiteralString(text, vmcontext.Mask)
	if !halves {
		return text
	}
	return maskRuns(text)
}

// maskRuns replaces each maximal run of [a-z0-9] of exactly secretHalfLen
// characters with the mask.
func maskRuns(text string) string {
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		if end-start == secretHalfLen {
			b.WriteString(vmcontext.Mask)
		} else {
			b.WriteString(text[start:end])
		}
		start = -1
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
		b.WriteByte(c)
	}
	flush(len(text))
	return b.String()
}
