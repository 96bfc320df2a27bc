package context

import (
	"errors"
	"fmt"
)

var (
	// ErrNoCredentials means no source yielded a complete set of OneGate
	// credentials (endpoint, VM ID, token).
	ErrNoCredentials = errors.New("no OneGate credentials")
	// ErrNoContextDevice means no block device is labelled CONTEXT.
	ErrNoContextDevice = errors.New("no device with LABEL=CONTEXT")
	// ErrContractTooNew means the template was rendered for a newer agent.
	ErrContractTooNew = errors.New("contract version newer than this agent understands")
)

// ParseError locates a syntax error in a context file. It names the line and,
// when known, the key, but never the value: values hold tokens.
type ParseError struct {
	Line int
	Key  string // empty when the error precedes the key
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Key, e.Msg)
}

// SettingError names the context variable whose value is unusable. The value
// is quoted only for variables that are never secret (ports, CIDRs, names).
type SettingError struct {
	Key string
	Msg string
}

func (e *SettingError) Error() string { return e.Key + ": " + e.Msg }
