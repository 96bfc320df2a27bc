package onegatesim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// FlowError is OneFlow refusing a service template (create) or an
// instantiate call: the HTTP status its server answers and the body.
//   - 400: the template fails validation at create, or one of the
//     instantiate route's own checks fails (inputs, networks);
//   - 500: the merged document fails validation (instantiate hands the
//     exception back and the route answers GENERAL_EC), or Ruby raises
//     something nobody rescues (the server's error 500 block then answers
//     {"message":"Internal server error","reason":...}).
//
// errors.Is(err, ErrBadTemplate) or ErrMissingInputs tells the kind.
type FlowError struct {
	Status  int
	Message string
	kind    error
	detail  string // the simulator's addition, not in the body
}

func (e *FlowError) Error() string {
	s := fmt.Sprintf("OneFlow %d: %s", e.Status, e.Message)
	if e.detail != "" {
		s += " (" + e.detail + ")"
	}
	return s
}
func (e *FlowError) Unwrap() error { return e.kind }

func refused(status int, format string, args ...any) *FlowError {
	return &FlowError{Status: status, Message: fmt.Sprintf(format, args...), kind: ErrBadTemplate}
}

func missingInputs(msg string) *FlowError {
	return &FlowError{Status: 400, Message: msg, kind: ErrMissingInputs}
}

// uncaught is an exception OneFlow's routes do not rescue
// (oneflow-server.rb "error 500 do").
func uncaught(e *rubyExc) *FlowError {
	b, _ := json.Marshal(map[string]string{"message": "Internal server error", "reason": e.msg})
	return &FlowError{Status: 500, Message: string(b), kind: ErrBadTemplate}
}

// asRefusal turns a validation failure into the route's answer: status for
// a ParseException, 500 for an exception that escapes.
func asRefusal(err error, status int) error {
	var ve *validationError
	var te *rubyTypeError
	switch {
	case errors.As(err, &ve):
		return refused(status, "%s", ve.msg)
	case errors.As(err, &te):
		return uncaught(&rubyExc{"TypeError", te.msg})
	}
	return err
}

// parseService does what registering a template and instantiating it do on
// v's OneFlow (oneflow-server.rb POST /service_template and POST
// /service_template/:id/action "instantiate", ServiceTemplate#instantiate),
// and returns what deployment needs. Refusals are *FlowError.
func parseService(tmpl, merge []byte, v version) (*serviceSpec, error) {
	body, err := createTemplate(tmpl, v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if len(bytes.TrimSpace(merge)) > 0 {
		x, exc := rubyJSONParse(merge)
		if exc != nil {
			return nil, uncaught(exc)
		}
		switch mm := x.(type) {
		case map[string]any:
			m = mm
		case nil: // `opts['merge_template'] || {}`
		default:
			return nil, refused(400, "%s", noMethod("key?", x).msg)
		}
	}
	check := routeChecks6
	if v.flow7() {
		check = routeChecks7
	}
	if err := check(body, m); err != nil {
		return nil, err
	}
	if err := networkDefaults(body, m); err != nil {
		return nil, err
	}
	merged, err := mergeInstantiate(body, m, v)
	if err != nil {
		return nil, err
	}
	if err := validateService(merged, v); err != nil {
		return nil, asRefusal(err, 500)
	}
	return specFromBody(merged, v)
}

// createTemplate is POST /service_template: JSON.parse and validate (which
// in 7.x converts a 6.x document first); what passes is what is stored.
func createTemplate(tmpl []byte, v version) (map[string]any, error) {
	x, exc := rubyJSONParse(tmpl)
	if exc != nil {
		return nil, refused(400, "%s", exc.msg) // JSON::ParserError is rescued there
	}
	if err := validateService(x, v); err != nil {
		return nil, asRefusal(err, 400)
	}
	return x.(map[string]any), nil
}

// validateService is ServiceTemplate.validate.
func validateService(body any, v version) error {
	if v.flow7() {
		m, ok := body.(map[string]any)
		if !ok {
			return uncaught(noMethod("key?", body)) // old_format? comes first
		}
		if oldFormat(m) {
			if err := convertTemplate(m); err != nil {
				return err
			}
		}
	}
	if _, err := validate(body, serviceSchema(v), "", v.flow7()); err != nil {
		return err
	}
	roles := body.(map[string]any)["roles"].([]any)
	if v.flow7() {
		for _, r := range roles { // validate_role, per type
			rm, ok := r.(map[string]any)
			if !ok {
				return uncaught(noMethod("fetch", r))
			}
			t, has := rm["type"]
			if !has {
				t = "vm"
			}
			switch t {
			case "vm":
				if _, err := validate(rm, vmRoleSchema7(), "", true); err != nil {
					return err
				}
			case "vr":
				return fmt.Errorf("%w: role %s: virtual router roles (type vr) are not simulated", ErrBadTemplate, rubyString(rm["name"]))
			default:
				return &validationError{fmt.Sprintf("Unsupported role type \"%s\"", rubyString(t))}
			}
		}
	}
	return validateValues(roles)
}

// validateValues is validate_values (and 7.x's validate_vmvalues): what the
// schema cannot say. Not simulated: the elasticity expression grammar
// (treetop), Time.parse of start_time and cron syntax of recurrence.
func validateValues(roles []any) error {
	for i, r := range roles {
		role := r.(map[string]any)
		name := rubyString(role["name"])
		for _, o := range roles[i+1:] {
			if o.(map[string]any)["name"] == role["name"] {
				return &validationError{fmt.Sprintf("Role name '%s' is repeated", name)}
			}
		}
		card, _ := role["cardinality"].(int)
		for _, lim := range []struct {
			key, msg string
			bad      func(n int) bool
		}{
			{"min_vms", "greater than or equal to 'min_vms'", func(n int) bool { return n > card }},
			{"max_vms", "lower than or equal to 'max_vms'", func(n int) bool { return n < card }},
		} {
			val, has := role[lim.key]
			if !has || val == nil {
				continue
			}
			n, exc := rubyToIValue(val)
			if exc != nil {
				return uncaught(exc)
			}
			if lim.bad(n) {
				return &validationError{fmt.Sprintf("Role '%s' 'cardinality' must be %s", name, lim.msg)}
			}
		}
		el, _ := role["elasticity_policies"].([]any)
		sc, _ := role["scheduled_policies"].([]any)
		if (len(el) > 0 || len(sc) > 0) && (role["min_vms"] == nil || role["max_vms"] == nil) {
			return &validationError{fmt.Sprintf("Role '%s' with  'elasticity_policies' or 'scheduled_policies'must define both 'min_vms' and 'max_vms'", name)}
		}
		for j, p := range el {
			if exp, _ := p.(map[string]any)["expression"].(string); exp == "" {
				return &validationError{fmt.Sprintf("Role '%s', elasticity policy #%d 'expression' cannot be empty", name, j)}
			}
		}
		for j, p := range sc {
			pm := p.(map[string]any)
			st, rc := pm["start_time"], pm["recurrence"]
			switch {
			case st != nil && rc != nil:
				return &validationError{fmt.Sprintf("Role '%s', scheduled policy #%d must define 'start_time' or 'recurrence', but not both", name, j)}
			case st == nil && rc == nil:
				return &validationError{fmt.Sprintf("Role '%s', scheduled policy #%d needs to define either 'start_time' or 'recurrence'", name, j)}
			}
		}
	}
	return nil
}

// checkInputs is check_user_inptus (7.x) and check_custom_attrs (6.x),
// which differ only in their words.
func checkInputs(inputs, values any, flow7 bool) error {
	noValues, format, missing := "The Service template specifies custom attributes but no values have been found",
		"Wrong custom_attrs or custom_attrs_values format",
		"Verify that every custom attribute have its corresponding value defined"
	if flow7 {
		noValues, format, missing = ErrMissingInputs.Error(),
			"Wrong User Inputs or User Inputs Values format",
			"Verify that every User Input have its corresponding value defined"
	}
	if inputs == nil {
		return nil
	}
	empty, known := rubyEmpty(inputs)
	switch {
	case !known:
		return refused(400, "%s", noMethod("empty?", inputs).msg)
	case empty:
		return nil
	case values == nil:
		return missingInputs(noValues)
	}
	im, ok1 := inputs.(map[string]any)
	vm, ok2 := values.(map[string]any)
	if !ok1 || !ok2 {
		return refused(400, "%s", format)
	}
	var absent []string
	for k := range im {
		if _, ok := vm[k]; !ok {
			absent = append(absent, k)
		}
	}
	if len(absent) > 0 {
		sort.Strings(absent)
		e := missingInputs(missing)
		e.detail = "no value for " + strings.Join(absent, ", ")
		return e
	}
	return nil
}

// findRole is roles_merge_template.find {|item| item['name'] == name}.
func findRole(list []any, name any) (map[string]any, error) {
	for _, item := range list {
		n, exc := rubyIndex(item, "name")
		if exc != nil {
			return nil, refused(400, "%s", exc.msg) // rescued as StandardError
		}
		if n != nil && n == name {
			m, _ := item.(map[string]any)
			return m, nil
		}
	}
	return nil, nil
}
