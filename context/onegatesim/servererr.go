package onegatesim

import (
	"html"
	"net/http"
	"regexp"
	"strings"
)

// How the OneGate server's 500s read, which changed at 7.2 (one#7251, commit
// e734a437, "error 500 do" in onegate-server.rb @release-7.2.0):
//   - An explicit `halt 500, msg` in a route: before 7.2 the body is msg.
//     From 7.2, Sinatra runs the error 500 block for it too, finds no
//     exception, and answers "Internal server error".
//   - An exception the route does not rescue: from 7.2 the block answers
//     its message, a leading "ERROR:" stripped. Before 7.2 the server set no
//     environment, so Sinatra ran in development mode, where ShowExceptions
//     answers with its debug page: HTML naming the exception and message
//     (plain text for curl), instead of the block.

// msgInternal500 is what 7.2+ answers to an explicit halt 500.
const msgInternal500 = "Internal server error"

// halt500 is `halt 500, msg`.
func (s *Sim) halt500(msg string) reply {
	if s.v.errorHandler500() {
		return text(http.StatusInternalServerError, msgInternal500)
	}
	return text(http.StatusInternalServerError, msg)
}

var leadingError = regexp.MustCompile(`^ERROR:\s*`)

// raised is an exception that escapes the route.
func (s *Sim) raised(r *http.Request, e *rubyExc) reply {
	if s.v.errorHandler500() {
		return text(http.StatusInternalServerError, leadingError.ReplaceAllString(e.msg, ""))
	}
	if strings.Contains(r.Header.Get("User-Agent"), "curl") {
		return reply{status: http.StatusInternalServerError, ctype: "text/plain",
			body: []byte(e.class + ": " + e.msg + "\n")}
	}
	// A compact stand-in for Sinatra's page, which also dumps the backtrace
	// and the request (headers included).
	page := "<!DOCTYPE html>\n<html>\n<head><title>" + html.EscapeString(e.class) + " at " +
		html.EscapeString(r.URL.Path) + "</title></head>\n<body>\n<div id=\"summary\">\n<h1>" +
		html.EscapeString(e.class) + " at " + html.EscapeString(r.URL.Path) + "</h1>\n<h2>" +
		html.EscapeString(e.msg) + "</h2>\n</div>\n</body>\n</html>\n"
	return reply{status: http.StatusInternalServerError, ctype: "text/html;charset=utf-8", body: []byte(page)}
}
