package flow

import "fmt"

// OneFlowVersion selects the service template data model: 6 for OneFlow
// 6.8/6.10 (vm_template, vm_template_contents string, custom_attrs), 7 for
// 7.0-7.4 (type, template_id, template_contents object, user_inputs).
type OneFlowVersion int

// Supported data models; VersionAuto lets Validate detect it.
const (
	VersionAuto OneFlowVersion = 0
	Version6    OneFlowVersion = 6
	Version7    OneFlowVersion = 7
)

func (v OneFlowVersion) String() string {
	switch v {
	case VersionAuto:
		return "auto"
	case Version6:
		return "6.x"
	case Version7:
		return "7.x"
	}
	return fmt.Sprintf("unknown(%d)", int(v))
}

func (v OneFlowVersion) check() error {
	if v != Version6 && v != Version7 {
		return fmt.Errorf("%w: %d (want 6 or 7)", ErrVersion, int(v))
	}
	return nil
}
