package kubeconfig

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Answer is a master's reply to one request: a sealed payload, or a
// refusal the CLI prints. At is the master's clock when it answered; the
// master erases answers nobody fetched after a while (AnswerTTL).
type Answer struct {
	At     time.Time
	Sealed string // base64url, when the request was granted
	Reason string // why not, otherwise
}

// AnswerTTL is how long an answer waits for its requester before the
// master erases it (and its request).
const AnswerTTL = 10 * time.Minute

// Granted reports whether the answer carries a payload.
func (a Answer) Granted() bool { return a.Sealed != "" }

// Bounds of an answer value: a sealed payload is about 4 KiB (a CA, a
// certificate and a key in PEM, age's header, base64); a reason one line.
const (
	MaxSealed = 48 << 10
	maxReason = 240
)

// Encode renders the answer value: "1 ok <unix> <sealed>" or
// "1 refused <unix> <reason>". Reasons are made OneGate-safe.
func (a Answer) Encode() (string, error) {
	at := strconv.FormatInt(a.At.Unix(), 10)
	if a.Granted() {
		if err := checkSealedText(a.Sealed); err != nil {
			return "", err
		}
		return strings.Join([]string{protocolVersion, "ok", at, a.Sealed}, " "), nil
	}
	return strings.Join([]string{protocolVersion, "refused", at, SafeText(a.Reason, maxReason)}, " "), nil
}

// ParseAnswer reads an answer value.
func ParseAnswer(v string) (Answer, error) {
	if len(v) > MaxSealed+64 {
		return Answer{}, fmt.Errorf("answer: %w: longer than %d bytes", ErrMalformed, MaxSealed+64)
	}
	f := strings.SplitN(v, " ", 4)
	if len(f) != 4 || f[0] != protocolVersion {
		return Answer{}, fmt.Errorf("answer: %w: want \"%s ok|refused unix-time ...\"", ErrMalformed, protocolVersion)
	}
	secs, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || secs < 0 || secs > 1<<40 || strconv.FormatInt(secs, 10) != f[2] {
		return Answer{}, fmt.Errorf("answer: %w: bad time", ErrMalformed)
	}
	a := Answer{At: time.Unix(secs, 0).UTC()}
	switch f[1] {
	case "ok":
		if err := checkSealedText(f[3]); err != nil {
			return Answer{}, fmt.Errorf("answer: %w", err)
		}
		a.Sealed = f[3]
	case "refused":
		a.Reason = SafeText(f[3], maxReason)
		if a.Reason == "" {
			a.Reason = "no reason given"
		}
	default:
		return Answer{}, fmt.Errorf("answer: %w: neither ok nor refused", ErrMalformed)
	}
	return a, nil
}

// SafeText makes s one printable line OneGate stores unchanged (no quote,
// comma, bracket, backslash or control character: onegate.CheckValue), at
// most n bytes.
func SafeText(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"':
			r = '\''
		case r == ',' || r == '[' || r == ']' || r == '\\':
			r = ';'
		case r < 0x20 || r == 0x7f || r > 0x7e:
			r = ' '
		}
		if b.Len() >= n {
			break
		}
		b.WriteRune(r)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
