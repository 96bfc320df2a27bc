package register

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// MaxAnswer bounds every answer read from oned or OneFlow. A VM document or
// a user's template pool is a few hundred kilobytes; 16 MiB leaves room for
// thousands of templates while a hostile or broken server cannot make the
// CLI buffer (and parse) hundreds of megabytes.
const MaxAnswer = 16 << 20

// maxErrorBody is how much of a failed answer is read: enough for any
// server's error message, not for a 5 MB HTML page.
const maxErrorBody = 64 << 10

// ErrTooLarge: an answer was longer than MaxAnswer.
var ErrTooLarge = errors.New("answer too large")

// ErrRedirect: a server answered with a redirect, which is never followed.
var ErrRedirect = errors.New("redirect refused")

// safeClient returns a copy of hc (a default client when nil) that never
// follows a redirect: every request to oned carries user:password in its
// body and every OneFlow request Basic credentials, and a 307 would send
// both again to wherever the server points. The endpoint is the user's to
// choose, so the error names the target instead.
func safeClient(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	c.CheckRedirect = refuseRedirect
	return c
}

func refuseRedirect(req *http.Request, via []*http.Request) error {
	from := via[len(via)-1].URL
	return fmt.Errorf("%w: %s points to %s; the request carries the credentials, so set that endpoint yourself if you trust it",
		ErrRedirect, from.Redacted(), req.URL.Redacted())
}

// readBounded reads r to the end, failing with ErrTooLarge past limit
// bytes instead of buffering whatever the server sends.
func readBounded(r io.Reader, limit int64) ([]byte, error) {
	return readBoundedSized(r, limit, -1)
}

// readBoundedSized is readBounded for an answer that announced its size
// (Content-Length, -1 if not): read into one buffer of that size rather
// than a growing one, which would briefly hold twice the answer.
func readBoundedSized(r io.Reader, limit, size int64) ([]byte, error) {
	if size >= 0 && size <= limit {
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		if n, _ := io.ReadFull(r, make([]byte, 1)); n > 0 {
			return nil, fmt.Errorf("%w: longer than its Content-Length", ErrBadAnswer)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: more than %d MiB", ErrTooLarge, limit>>20)
	}
	return b, nil
}

// readErrorBody reads at most maxErrorBody bytes of a failed answer. When
// the answer goes on, the last kilobyte read is dropped too: a secret the
// server echoed across the cut would otherwise survive redaction as a
// prefix nobody recognises.
func readErrorBody(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody+1))
	return errorPrefix(b)
}

// errorPrefix is the part of an answer an excerpt may be taken from.
func errorPrefix(b []byte) string {
	if len(b) > maxErrorBody {
		b = b[:maxErrorBody-1024]
	}
	return string(b)
}
