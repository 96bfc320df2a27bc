package kubeconfig

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Answer is a master's reply to one request: a sealed challenge, then a
// sealed payload, or a refusal the CLI prints. At is the master's clock
// when it answered; the master erases answers nobody fetched after a
// while (AnswerTTL).
type Answer struct {
	At     time.Time
	Sealed string // base64url: the payload, or the challenge when Challenge
	Reason string // why not, when Sealed is empty
	// Challenge marks Sealed as a sealed Challenge, not a payload.
	Challenge bool
	// Legacy is a protocol 1 refusal: what a master tells an old
	// onekube-flow, and what an old master tells a new one.
	Legacy bool
}

// AnswerTTL is how long an answer waits for its requester before the
// master erases it (and its request).
const AnswerTTL = 10 * time.Minute

// Granted reports whether the answer carries a payload.
func (a Answer) Granted() bool { return a.Sealed != "" && !a.Challenge }

// Bounds of an answer value: a sealed payload is about 4 KiB (a CA, a
// certificate and a key in PEM, age's header, base64); a reason one line.
const (
	MaxSealed = 48 << 10
	maxReason = 240
)

// Answer kinds on the wire.
const (
	answerOK        = "ok"
	answerChallenge = "challenge"
	answerRefused   = "refused"
)

// Encode renders the answer value: "2 ok <unix> <sealed>", "2 challenge
// <unix> <sealed>" or "2 refused <unix> <reason>" ("1 refused ..." when
// Legacy, which protocol 1 CLIs print). Reasons are made OneGate-safe.
func (a Answer) Encode() (string, error) {
	at := strconv.FormatInt(a.At.Unix(), 10)
	if a.Sealed != "" && !a.Legacy {
		if err := checkSealedText(a.Sealed); err != nil {
			return "", err
		}
		kind := answerOK
		if a.Challenge {
			kind = answerChallenge
		}
		return strings.Join([]string{protocolVersion, kind, at, a.Sealed}, " "), nil
	}
	v := protocolVersion
	if a.Legacy {
		v = legacyVersion
	}
	return strings.Join([]string{v, answerRefused, at, SafeText(a.Reason, maxReason)}, " "), nil
}

// ParseAnswer reads an answer value.
func ParseAnswer(v string) (Answer, error) {
	if len(v) > MaxSealed+64 {
		return Answer{}, fmt.Errorf("answer: %w: longer than %d bytes", ErrMalformed, MaxSealed+64)
	}
	f := strings.SplitN(v, " ", 4)
	legacy := len(f) == 4 && f[0] == legacyVersion && f[1] == answerRefused
	if len(f) != 4 || (f[0] != protocolVersion && !legacy) {
		return Answer{}, fmt.Errorf("answer: %w: want \"%s ok|challenge|refused unix-time ...\"", ErrMalformed, protocolVersion)
	}
	secs, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || secs < 0 || secs > 1<<40 || strconv.FormatInt(secs, 10) != f[2] {
		return Answer{}, fmt.Errorf("answer: %w: bad time", ErrMalformed)
	}
	a := Answer{At: time.Unix(secs, 0).UTC(), Legacy: legacy}
	switch f[1] {
	case answerOK, answerChallenge:
		if err := checkSealedText(f[3]); err != nil {
			return Answer{}, fmt.Errorf("answer: %w", err)
		}
		a.Sealed, a.Challenge = f[3], f[1] == answerChallenge
	case answerRefused:
		a.Reason = SafeText(f[3], maxReason)
		if a.Reason == "" {
			a.Reason = "no reason given"
		}
	default:
		return Answer{}, fmt.Errorf("answer: %w: neither ok, challenge nor refused", ErrMalformed)
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
