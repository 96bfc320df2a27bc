package access

import (
	"errors"

	errs "github.com/OpenNebula/one/src/oca/go/src/goca/errors"

	"github.com/onekube/onekube/flow/register"
)

// lasting reports whether a failed oned call will fail the same way if
// made again, so that waiting cannot mend it: oned answered with a fault
// of its own (authentication, authorization, no such VM, …; goca
// errors.ResponseError), the endpoint redirected (never followed, the
// call carries the password), or the answer was not oned's. A network
// fault, a 5xx from a proxy or one call's timeout may pass.
func lasting(err error) bool {
	var re *errs.ResponseError
	if errors.As(err, &re) {
		return true
	}
	var ce *errs.ClientError
	if errors.As(err, &ce) {
		switch ce.Code {
		case errs.ClientRespXMLRPCFault, errs.ClientRespXMLRPCParse, errs.ClientRespONeParse:
			return true
		}
	}
	return errors.Is(err, register.ErrRedirect) || errors.Is(err, register.ErrBadAnswer) || errors.Is(err, register.ErrTooLarge)
}

// causes is one message for several failures, each kept for errors.Is.
type causes struct {
	msg  string
	errs []error
}

func (c *causes) Error() string   { return c.msg }
func (c *causes) Unwrap() []error { return c.errs }
