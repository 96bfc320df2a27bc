package register

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	errs "github.com/OpenNebula/one/src/oca/go/src/goca/errors"
	vmcontext "github.com/onekube/onekube/context"
)

// maxErrorLine bounds an error message built from a server's words.
const maxErrorLine = 300

// onedHTTP is the client goca talks to oned with: hc's timeout, never a
// redirect (the request body holds user:password), every answer bounded
// and checked before goca parses it.
func onedHTTP(hc *http.Client, user string, password vmcontext.Secret) *http.Client {
	c := safeClient(hc)
	c.Transport = onedGuard{base: c.Transport, limit: MaxAnswer, user: user, password: password}
	return c
}

// callError is a failed oned call: one short line for people, the cause
// for errors.Is.
type callError struct {
	msg   string
	cause error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.cause }

// onedCall runs one goca call. A panic inside goca (it trusts the answer's
// shape; onedGuard should have refused it) becomes an error, and every
// error becomes one line without the credentials.
func onedCall(doing string, password vmcontext.Secret, call func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &callError{fmt.Sprintf("oned: %s: %v: the client failed on it (%v)", doing, ErrBadAnswer, r), ErrBadAnswer}
		}
	}()
	if err := call(); err != nil {
		msg, cause := onedReason(err)
		msg = oneLine(vmcontext.Redact(msg, password), maxErrorLine)
		return &callError{"oned: " + doing + ": " + msg, cause}
	}
	return nil
}

// onedReason digs our own reason (a refused redirect, a bad or too large
// answer) out of goca's wrapping; other errors keep goca's words.
func onedReason(err error) (string, error) {
	var ce *errs.ClientError
	if !errors.As(err, &ce) || ce.Err == nil {
		return err.Error(), err
	}
	inner := ce.Err
	var ue *url.Error
	if errors.As(inner, &ue) {
		var ae *answerError
		if errors.As(ue.Err, &ae) || errors.Is(ue.Err, ErrRedirect) || errors.Is(ue.Err, ErrTooLarge) {
			return ue.Err.Error(), ue.Err
		}
		return ue.Error(), ue
	}
	return ce.Error(), inner
}
