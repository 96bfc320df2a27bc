package context

import "bytes"

// ParseOneEnv reads /var/run/one-context/one_env, which one-context writes as
// `export KEY="value"` lines without escaping anything (reference §2.3). A
// value therefore runs from the opening quote to the first quote that ends a
// line; inner quotes and newlines are kept literally, which is what the writer
// meant and what sourcing the file would get wrong. Blank lines and comments
// are skipped; anything else is a ParseError.
func ParseOneEnv(data []byte) (Vars, error) {
	vars := Vars{}
	line := 1
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos
		}
		text := bytes.TrimSpace(data[pos:end])
		if len(text) == 0 || text[0] == '#' {
			pos, line = end+1, line+1
			continue
		}
		rest, ok := bytes.CutPrefix(bytes.TrimLeft(data[pos:end], " \t"), []byte("export "))
		if !ok {
			return nil, &ParseError{Line: line, Msg: `expected export KEY="value"`}
		}
		rest = bytes.TrimLeft(rest, " \t")
		eq := bytes.IndexByte(rest, '=')
		if eq <= 0 || !isName(rest[:eq]) {
			return nil, &ParseError{Line: line, Msg: `expected export KEY="value"`}
		}
		key := string(rest[:eq])
		if eq+1 >= len(rest) || rest[eq+1] != '"' {
			return nil, &ParseError{Line: line, Key: key, Msg: "value is not double-quoted"}
		}
		// Offset of the value's first byte in data.
		vstart := end - len(rest) + eq + 2
		vend, lines := closingQuote(data, vstart)
		if vend < 0 {
			return nil, &ParseError{Line: line, Key: key, Msg: "unterminated double quote"}
		}
		val := data[vstart:vend]
		if bytes.IndexByte(val, 0) >= 0 {
			return nil, &ParseError{Line: line, Key: key, Msg: "NUL byte in value"}
		}
		vars[key] = string(val)
		pos, line = vend+2, line+lines+1
	}
	return vars, nil
}

// closingQuote finds the first `"` at or after from that is followed by a
// newline or the end of data, and counts the newlines it skipped.
func closingQuote(data []byte, from int) (int, int) {
	lines := 0
	for i := from; i < len(data); i++ {
		switch data[i] {
		case '"':
			if i+1 == len(data) || data[i+1] == '\n' {
				return i, lines
			}
		case '\n':
			lines++
		}
	}
	return -1, 0
}

func isName(b []byte) bool {
	for i, c := range b {
		if !isNameByte(c, i == 0) {
			return false
		}
	}
	return len(b) > 0
}
