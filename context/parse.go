package context

import "bytes"

// Parse reads a context.sh without executing it. OpenNebula writes one
// KEY='value' per variable, a single quote inside a value as the four bytes
// quote, backslash, quote, quote, and newlines verbatim (reference §2.2).
// Hand-written files are read with the meaning bash gives them, for the
// quoting subset that cannot run code: single and double quotes, backslash
// escapes, several assignments on a line, an "export" prefix, comments.
// Anything that would expand or execute ($, `, ~, |, ...) is a ParseError, so
// a file that parses means what bash would make of it. Later assignments to a
// key replace earlier ones, as in the shell.
func Parse(data []byte) (Vars, error) {
	p := &shParser{data: data, line: 1}
	vars := Vars{}
	for {
		key, val, ok, err := p.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return vars, nil
		}
		vars[key] = val
	}
}

type shParser struct {
	data []byte
	pos  int
	line int
	// midLine is true after an assignment on the current line, where another
	// assignment or a comment may follow but "export" may not.
	midLine bool
}

func (p *shParser) errorf(key, msg string) error {
	return &ParseError{Line: p.line, Key: key, Msg: msg}
}

// next returns the next assignment, or ok=false at the end of the data.
func (p *shParser) next() (key, val string, ok bool, err error) {
	exported := false // "export" was read; an assignment must follow
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == ' ' || c == '\t':
			p.pos++
			continue
		case c == '\n' || c == ';' || c == '#':
			if exported {
				return "", "", false, p.errorf("", "export without KEY=value")
			}
		}
		switch {
		case c == '\n':
			p.pos++
			p.line++
			p.midLine = false
		case c == ';':
			if !p.midLine { // bash rejects an empty command
				return "", "", false, p.errorf("", "unexpected ;")
			}
			p.pos++
			p.midLine = false
		case c == '#':
			for p.pos < len(p.data) && p.data[p.pos] != '\n' {
				p.pos++
			}
		case !p.midLine && !exported && p.hasWord("export"):
			p.pos += len("export")
			exported = true
		default:
			return p.assignment()
		}
	}
	if exported {
		return "", "", false, p.errorf("", "export without KEY=value")
	}
	return "", "", false, nil
}

// hasWord reports whether the keyword w followed by a blank starts at pos.
func (p *shParser) hasWord(w string) bool {
	end := p.pos + len(w)
	if end >= len(p.data) || string(p.data[p.pos:end]) != w {
		return false
	}
	return p.data[end] == ' ' || p.data[end] == '\t'
}

func (p *shParser) assignment() (string, string, bool, error) {
	start := p.pos
	for p.pos < len(p.data) && isNameByte(p.data[p.pos], p.pos == start) {
		p.pos++
	}
	if p.pos == start || p.pos >= len(p.data) || p.data[p.pos] != '=' {
		return "", "", false, p.errorf("", "expected KEY=value")
	}
	key := string(p.data[start:p.pos])
	p.pos++ // '='
	val, err := p.word(key)
	if err != nil {
		return "", "", false, err
	}
	p.midLine = true
	return key, val, true, nil
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

// word reads one shell word: the value of key. It stops before the blank,
// newline, ';' or end of data that ends the word.
func (p *shParser) word(key string) (string, error) {
	var out []byte
	startLine := p.line
	// tildeOK tracks where bash would expand an unquoted ~ in an assignment:
	// at the start of the value and after an unquoted ':'.
	tildeOK := true
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch c {
		case ' ', '\t', '\n', ';':
			return string(out), nil
		case '\'':
			end := p.pos + 1
			for end < len(p.data) && p.data[end] != '\'' {
				end++
			}
			if end >= len(p.data) {
				p.line = startLine
				return "", p.errorf(key, "unterminated single quote")
			}
			seg := p.data[p.pos+1 : end]
			if bytes.IndexByte(seg, 0) >= 0 {
				return "", p.errorf(key, "NUL byte in value")
			}
			p.countLines(seg)
			out = append(out, seg...)
			p.pos = end + 1
		case '"':
			seg, err := p.doubleQuoted(key, startLine)
			if err != nil {
				return "", err
			}
			out = append(out, seg...)
		case '\\':
			if p.pos+1 >= len(p.data) {
				return "", p.errorf(key, "backslash at end of file")
			}
			n := p.data[p.pos+1]
			p.pos += 2
			if n == '\n' { // line continuation
				p.line++
				break
			}
			if n == 0 {
				return "", p.errorf(key, "NUL byte in value")
			}
			out = append(out, n)
		case '$', '`':
			return "", p.errorf(key, "shell expansion is not supported")
		case '~':
			if tildeOK {
				return "", p.errorf(key, "unquoted ~ would be expanded by the shell")
			}
			out = append(out, c)
			p.pos++
		case '|', '&', '<', '>', '(', ')', 0:
			return "", p.errorf(key, "unsupported shell syntax in value")
		default:
			out = append(out, c)
			p.pos++
		}
		tildeOK = c == ':'
	}
	return string(out), nil
}

// doubleQuoted reads a "..." segment starting at pos. Inside, a backslash
// escapes only $ ` " \ and newline, as in bash; expansions are refused.
func (p *shParser) doubleQuoted(key string, startLine int) ([]byte, error) {
	var out []byte
	p.pos++ // opening quote
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch c {
		case '"':
			p.pos++
			return out, nil
		case '$', '`':
			return nil, p.errorf(key, "shell expansion is not supported")
		case '\\':
			if p.pos+1 < len(p.data) {
				switch n := p.data[p.pos+1]; n {
				case '\n':
					p.line++
					p.pos += 2
					continue
				case '$', '`', '"', '\\':
					out = append(out, n)
					p.pos += 2
					continue
				}
			}
			out = append(out, c)
			p.pos++
		case 0:
			return nil, p.errorf(key, "unsupported shell syntax in value")
		case '\n':
			p.line++
			out = append(out, c)
			p.pos++
		default:
			out = append(out, c)
			p.pos++
		}
	}
	p.line = startLine
	return nil, p.errorf(key, "unterminated double quote")
}

func (p *shParser) countLines(b []byte) {
	for _, c := range b {
		if c == '\n' {
			p.line++
		}
	}
}
