package gate

import "errors"

// ErrUnauthorized means OneGate rejected this VM's token (HTTP 401):
// retrying cannot help, so every wait stops at once.
var ErrUnauthorized = errors.New("OneGate rejected this VM's token")

// retryableError marks an error of a OneGate call that may succeed later
// (5xx, timeouts, connection refused). The client adapter wraps errors in
// it; waits retry only these.
type retryableError struct{ err error }

func (e retryableError) Error() string { return e.err.Error() }
func (e retryableError) Unwrap() error { return e.err }

// Retryable marks err as transient.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return retryableError{err}
}

// IsRetryable reports whether err was marked transient.
func IsRetryable(err error) bool {
	var r retryableError
	return errors.As(err, &r)
}
