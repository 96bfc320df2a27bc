package onegatesim

import (
	"fmt"
	"strings"
)

// This file reproduces oned's template parser (src/parsers/template_parser.l
// and template_syntax.y), because whatever a guest PUTs through OneGate ends
// up there: which bodies are accepted, what they store and the error a bad
// one gets. The lexer is emulated rule by rule (flex: longest match, earlier
// rule on ties, unmatched bytes silently skipped); the parser follows the
// grammar's states, including bison's default reductions, so the "expecting"
// lists in syntax errors are the ones oned prints.

// attr is one top-level template attribute: a single value or a vector.
type attr struct {
	name   string
	value  string            // single attributes
	vector map[string]string // vector attributes (non-nil, maybe empty)
}

func (a attr) isVector() bool { return a.vector != nil }

// ParseError is a template syntax error as oned reports it.
type ParseError struct {
	Msg string // bison's message with location; empty when the parse aborted
}

func (e *ParseError) Error() string {
	if e.Msg == "" {
		return "Parse error: Unknown error"
	}
	return "Parse error: " + e.Msg
}

type tokKind int

const (
	tEOF tokKind = iota
	tEqual
	tComma
	tOBracket
	tCBracket
	tEqualEmpty
	tCDATA
	tString
	tVariable
	tEcho // flex's default rule: an unmatched byte, skipped
)

// tokName is what bison prints for each token: the aliases of the current
// grammar, quoted the way yytnamerr leaves names containing an apostrophe.
var tokName = [...]string{
	tEOF:        "end of file",
	tEqual:      `"'='"`,
	tComma:      `"','"`,
	tOBracket:   `"'['"`,
	tCBracket:   `"']'"`,
	tEqualEmpty: `"'=' followed by a newline"`,
	tCDATA:      `"']]>'"`,
	tString:     "attribute value",
	tVariable:   "attribute name",
}

type token struct {
	kind tokKind
	text string
}

type lexer struct {
	in        string
	p         int
	value     bool // flex start condition VALUE
	line      int  // yylineno
	firstLine int  // location of the last token, as YY_USER_ACTION keeps it
	firstCol  int
	lastCol   int
}

func newLexer(in string) *lexer {
	return &lexer{in: in, line: 1, firstLine: 1, firstCol: 1, lastCol: 1}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }
func isAlnum(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// span returns how many bytes from i satisfy ok.
func (l *lexer) span(i int, ok func(byte) bool) int {
	j := i
	for j < len(l.in) && ok(l.in[j]) {
		j++
	}
	return j - i
}

// around matches [blanks-or-newlines]* c [blanks-or-newlines]* (or blanks
// only when nl is false) and returns its length, 0 if c is not there.
func (l *lexer) around(c byte, nlBefore, nlAfter bool) int {
	ws := func(nl bool) func(byte) bool {
		return func(b byte) bool { return isBlank(b) || (nl && b == '\n') }
	}
	i := l.p + l.span(l.p, ws(nlBefore))
	if i >= len(l.in) || l.in[i] != c {
		return 0
	}
	i++
	return i + l.span(i, ws(nlAfter)) - l.p
}

func (l *lexer) next() token {
	for l.p < len(l.in) {
		n, kind, skip, strip := l.match()
		text := l.in[l.p : l.p+n]
		l.p += n
		l.line += strings.Count(text, "\n")
		l.firstLine, l.firstCol = l.line, l.lastCol
		l.lastCol += n
		if skip {
			continue
		}
		switch kind {
		case tString:
			if strip {
				text = text[1 : n-1]
			}
			text = strings.ReplaceAll(text, `\"`, `"`)
			l.value = false
		case tEqual:
			l.value = true
		case tOBracket, tCDATA:
			l.value = false
		}
		return token{kind, text}
	}
	return token{kind: tEOF}
}

// quoted is the longest match of "([^"]|\")*" at p: every inner quote must
// follow a backslash, so the match ends at the last quote reachable that way.
func (l *lexer) quoted() int {
	if l.p >= len(l.in) || l.in[l.p] != '"' {
		return 0
	}
	best := 0
	for k := l.p + 1; k < len(l.in); k++ {
		if l.in[k] != '"' {
			continue
		}
		best = k + 1 - l.p
		if l.in[k-1] != '\\' || k-1 == l.p {
			break // cannot be an inner quote, so nothing longer matches
		}
	}
	return best
}

// match picks the rule flex would: the longest match, the earlier rule on a
// tie; with no match flex's default rule echoes (here: skips) one byte.
func (l *lexer) match() (n int, kind tokKind, skip, strip bool) {
	type cand struct {
		n     int
		kind  tokKind
		skip  bool
		strip bool // the quoted-string rule: drop the quotes
	}
	var cs []cand
	if !l.value {
		cs = []cand{
			{l.comment(), 0, true, false},
			{l.span(l.p, func(b byte) bool { return isBlank(b) || b == '\n' }), 0, true, false},
			{l.span(l.p, isAlnum), tVariable, false, false},
			{l.around('=', false, false), tEqual, false, false},
			{l.equalEmpty(), tEqualEmpty, false, false},
			{l.around(',', true, true), tComma, false, false},
			{l.around(']', true, true), tCBracket, false, false},
		}
	} else {
		cs = []cand{
			{l.around('[', false, true), tOBracket, false, false},
			{l.cdata(), tCDATA, false, false},
			{l.quoted(), tString, false, true},
			{l.span(l.p, func(b byte) bool { return !strings.ContainsRune("=#\t \n,[]", rune(b)) }), tString, false, false},
		}
	}
	best := cand{}
	for _, c := range cs {
		if c.n > best.n {
			best = c
		}
	}
	if best.n == 0 {
		return 1, tEcho, true, false
	}
	return best.n, best.kind, best.skip, best.strip
}

func (l *lexer) comment() int {
	i := l.p + l.span(l.p, isBlank)
	if i >= len(l.in) || l.in[i] != '#' {
		return 0
	}
	nl := strings.IndexByte(l.in[i:], '\n')
	if nl < 0 {
		return 0 // the rule needs the newline
	}
	return i + nl + 1 - l.p
}

func (l *lexer) equalEmpty() int {
	n := l.around('=', false, false)
	if n == 0 || l.p+n >= len(l.in) || l.in[l.p+n] != '\n' {
		return 0
	}
	return n + 1
}

func (l *lexer) cdata() int {
	end := strings.IndexByte(l.in[l.p:], '\n')
	if end < 0 {
		end = len(l.in) - l.p
	}
	if !strings.Contains(l.in[l.p:l.p+end], "]]>") {
		return 0
	}
	return end
}

// parseTemplate parses OpenNebula template text into attributes, in input order.
func parseTemplate(in string) ([]attr, error) {
	l := newLexer(in)
	fail := func(got token, expect ...tokKind) error {
		msg := "syntax error, unexpected " + tokName[got.kind]
		for i, e := range expect {
			if i == 0 {
				msg += ", expecting " + tokName[e]
			} else {
				msg += " or " + tokName[e]
			}
		}
		return &ParseError{Msg: fmt.Sprintf("%s at line %d, columns %d:%d", msg, l.firstLine, l.firstCol, l.lastCol)}
	}
	var out []attr
	for {
		t := l.next()
		if t.kind == tEOF {
			return out, nil
		}
		if t.kind != tVariable {
			// bison reduces "template_file" first, where only the end fits.
			return nil, fail(t, tEOF)
		}
		name := t.text
		switch t = l.next(); t.kind {
		case tEqualEmpty:
			out = append(out, attr{name: attrName(name)})
			continue
		case tEqual:
		default:
			return nil, fail(t, tEqual, tEqualEmpty)
		}
		switch t = l.next(); t.kind {
		case tString:
			out = append(out, attr{name: attrName(name), value: t.text})
		case tCDATA:
			return nil, &ParseError{} // the grammar aborts without a message
		case tOBracket:
			vec, err := parseVector(l, fail)
			if err != nil {
				return nil, err
			}
			out = append(out, attr{name: attrName(name), vector: vec})
		default:
			return nil, fail(t, tOBracket, tCDATA, tString)
		}
	}
}

func parseVector(l *lexer, fail func(token, ...tokKind) error) (map[string]string, error) {
	vec := map[string]string{}
	t := l.next()
	if t.kind == tCBracket {
		return vec, nil
	}
	if t.kind != tVariable {
		return nil, fail(t, tCBracket, tVariable)
	}
	for {
		name := strings.ToUpper(t.text)
		if t = l.next(); t.kind != tEqual {
			return nil, fail(t, tEqual)
		}
		if t = l.next(); t.kind != tString {
			return nil, fail(t, tString)
		}
		if _, dup := vec[name]; !dup { // std::map::insert keeps the first
			vec[name] = t.text
		}
		switch t = l.next(); t.kind {
		case tCBracket:
			return vec, nil
		case tComma:
			if t = l.next(); t.kind != tVariable {
				return nil, fail(t, tVariable)
			}
		default:
			return nil, fail(t, tComma, tCBracket)
		}
	}
}

// attrName normalises a top-level name as oned's Attribute constructor
// does (include/Attribute.h): upper case, and "ONE_" in front of a name
// that is not a valid XML element: one that starts with neither a letter
// nor '_', or that starts with "XML" as written.
func attrName(name string) string {
	up := strings.ToUpper(name)
	if name != "" && !isAlpha(name[0]) && name[0] != '_' || strings.HasPrefix(name, "XML") {
		return "ONE_" + up
	}
	return up
}

func isAlpha(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
