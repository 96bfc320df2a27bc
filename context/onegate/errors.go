package onegate

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
)

var (
	// ErrTimeout means a request outlived Config.Timeout.
	ErrTimeout = errors.New("request timed out")
	// ErrInvalid means the client refused to send something the server
	// would mangle or reject (a bad key or value, a bad role name).
	ErrInvalid = errors.New("invalid request")
	// ErrWrongVM means OneGate answered a VM request with another VM.
	ErrWrongVM = errors.New("OneGate described the wrong VM")
)

// Error is a response with a non-2xx status. Body is the server's message
// made fit for logs and OneGate (errorText): one bounded line, an HTML
// page's title, never any part of the token.
type Error struct {
	Method string
	Path   string
	Status int
	Body   string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("onegate: %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	if h := e.hint(); h != "" {
		msg += " (" + h + ")"
	}
	return msg
}

// hint explains the statuses whose meaning is specific to OneGate
// (reference §1.1, §1.2).
func (e *Error) hint() string {
	switch {
	case e.Status == http.StatusUnauthorized:
		return "the token or VM ID was refused"
	case e.Status == http.StatusBadRequest && len(e.Path) > 5 && e.Path[:5] == "/vms/":
		return "that VM is not in this VM's service"
	case e.Status == http.StatusForbidden && e.Body == "Host not permitted":
		return "OneGate 7.0-7.3 behind a proxy rejects the Host header; upgrade or fix the proxy"
	case e.Status >= 300 && e.Status <= 399:
		return "OneGate never redirects: check ONEGATE_ENDPOINT and any proxy in between; the token was not sent there"
	}
	return ""
}

// IsUnauthorized reports whether OneGate refused the credentials (401).
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsBadRequest reports a 400: for GET /vms/:id, a VM outside this VM's
// service (onegate.md §1.2).
func IsBadRequest(err error) bool { return hasStatus(err, http.StatusBadRequest) }

// IsNotFound reports a 404: an unknown VM or service.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsAttributeNotFound reports the 500 an erase of an absent key gets
// (delete_element finds nothing): the key is gone, which is what the
// erase wanted.
func IsAttributeNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusInternalServerError && strings.Contains(e.Body, "attribute not found")
}

func hasStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

// IsRetryable reports whether the same request may succeed later: server
// errors (5xx), 408 and 429, timeouts, refused or reset connections. Other
// statuses (400, 401, 403, 404), refused input, certificate errors and a
// cancelled caller context are final. The client never retries by itself;
// the caller owns the backoff.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrWrongVM) || IsAttributeNotFound(err) {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status >= 500 || e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests
	}
	if errors.Is(err, ErrTimeout) {
		return true
	}
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	if errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &invalid) {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTemporary || dnsErr.IsTimeout || dnsErr.IsNotFound
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}
