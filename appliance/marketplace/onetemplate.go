package marketplace

import (
	"fmt"
	"strings"
)

// Attr is one attribute of an OpenNebula template: a single value, or a
// vector (CONTEXT = [ ... ]) when Vector is non-nil.
type Attr struct {
	Key    string
	Value  string
	Vector []Attr
}

// ParseTemplate reads OpenNebula template text in the form onekube-flow
// renders: KEY = "value" and KEY = [ K = "v", ... ] attributes, values
// double-quoted with \" as the only escape, "#" comments. Order is kept.
func ParseTemplate(text string) ([]Attr, error) {
	p := &tplParser{s: text}
	var out []Attr
	for {
		p.space()
		if p.eof() {
			return out, nil
		}
		a, err := p.attr(true)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
}

type tplParser struct {
	s   string
	pos int
}

func (p *tplParser) eof() bool { return p.pos >= len(p.s) }

func (p *tplParser) errorf(format string, args ...any) error {
	line := 1 + strings.Count(p.s[:p.pos], "\n")
	return fmt.Errorf("%w: line %d: %s", ErrTemplate, line, fmt.Sprintf(format, args...))
}

// space skips blanks, newlines and # comments.
func (p *tplParser) space() {
	for !p.eof() {
		switch c := p.s[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '#':
			for !p.eof() && p.s[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *tplParser) key() (string, error) {
	start := p.pos
	for !p.eof() {
		c := p.s[p.pos]
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			break
		}
		p.pos++
	}
	if p.pos == start {
		return "", p.errorf("want an attribute name")
	}
	return p.s[start:p.pos], nil
}

func (p *tplParser) expect(c byte) error {
	p.space()
	if p.eof() || p.s[p.pos] != c {
		return p.errorf("want %q", c)
	}
	p.pos++
	return nil
}

// attr reads KEY = "v", or KEY = [ ... ] when vectors are allowed (top level).
func (p *tplParser) attr(top bool) (Attr, error) {
	k, err := p.key()
	if err != nil {
		return Attr{}, err
	}
	if err := p.expect('='); err != nil {
		return Attr{}, err
	}
	p.space()
	if top && !p.eof() && p.s[p.pos] == '[' {
		p.pos++
		vec, err := p.vector()
		if err != nil {
			return Attr{}, fmt.Errorf("%s: %w", k, err)
		}
		return Attr{Key: k, Vector: vec}, nil
	}
	v, err := p.quoted()
	if err != nil {
		return Attr{}, fmt.Errorf("%s: %w", k, err)
	}
	return Attr{Key: k, Value: v}, nil
}

// vector reads the members after "[" up to and including "]".
func (p *tplParser) vector() ([]Attr, error) {
	vec := []Attr{}
	for {
		p.space()
		if !p.eof() && p.s[p.pos] == ']' {
			p.pos++
			return vec, nil
		}
		if len(vec) > 0 {
			if err := p.expect(','); err != nil {
				return nil, err
			}
			p.space()
		}
		a, err := p.attr(false)
		if err != nil {
			return nil, err
		}
		vec = append(vec, a)
	}
}

func (p *tplParser) quoted() (string, error) {
	if p.eof() || p.s[p.pos] != '"' {
		return "", p.errorf("want a double-quoted value")
	}
	p.pos++
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.pos]
		switch {
		case c == '\\' && p.pos+1 < len(p.s) && p.s[p.pos+1] == '"':
			b.WriteByte('"')
			p.pos += 2
		case c == '"':
			p.pos++
			return b.String(), nil
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return "", p.errorf("unterminated value")
}
