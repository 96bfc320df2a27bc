package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxDocDepth bounds the nesting of a validated document. A service
// template is about six levels deep; the bound keeps a hostile document
// from costing a deep walk in every check.
const maxDocDepth = 64

// docError is a reason a document cannot be read, at a JSON path.
type docError struct {
	path, msg string
}

func (e *docError) Error() string { return e.path + ": " + e.msg }

// decodeDoc parses exactly one JSON value into map[string]any, []any,
// json.Number, string, bool and nil, keeping numbers exact. Unlike
// encoding/json it refuses a key that appears twice in one object: Ruby's
// JSON.parse, which OneFlow uses, silently keeps the last one, so the
// document would not mean what its first reader sees.
func decodeDoc(doc []byte) (jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	r := docReader{dec: dec}
	v, err := r.value("$", 0)
	if err != nil {
		if errors.Is(err, io.EOF) {
			if r.tokens == 0 {
				return jnode{}, &docError{"$", "empty document"}
			}
			return jnode{}, &docError{"$", "not JSON: unexpected end of the document"}
		}
		var de *docError
		if errors.As(err, &de) {
			return jnode{}, de
		}
		return jnode{}, &docError{"$", "not JSON: " + err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return jnode{}, &docError{"$", "not JSON: data after the top-level value"}
	}
	return jnode{v, "$"}, nil
}

type docReader struct {
	dec    *json.Decoder
	tokens int
}

func (r *docReader) token() (json.Token, error) {
	t, err := r.dec.Token()
	if err == nil {
		r.tokens++
	}
	return t, err
}

func (r *docReader) value(path string, depth int) (any, error) {
	t, err := r.token()
	if err != nil {
		return nil, err
	}
	d, isDelim := t.(json.Delim)
	if !isDelim {
		return t, nil // json.Number, string, bool or nil
	}
	if depth >= maxDocDepth {
		return nil, &docError{path, fmt.Sprintf("nested deeper than %d levels", maxDocDepth)}
	}
	switch d {
	case '{':
		obj := map[string]any{}
		for r.dec.More() {
			kt, err := r.token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string) // the decoder only yields string keys here
			kpath := childPath(path, key)
			if _, dup := obj[key]; dup {
				return nil, &docError{kpath, fmt.Sprintf("duplicate key %s: OneFlow keeps only the last one", strconv.Quote(key))}
			}
			if obj[key], err = r.value(kpath, depth+1); err != nil {
				return nil, err
			}
		}
		_, err := r.token() // '}'
		return obj, err
	default: // '['
		arr := []any{}
		for i := 0; r.dec.More(); i++ {
			v, err := r.value(path+"["+strconv.Itoa(i)+"]", depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := r.token() // ']'
		return arr, err
	}
}
