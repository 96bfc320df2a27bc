package marketplace

import "errors"

// Sentinel errors; the returned errors wrap them with the position or key.
var (
	// ErrTemplate is a malformed OpenNebula template text.
	ErrTemplate = errors.New("malformed OpenNebula template")
	// ErrVersions is a malformed or incomplete versions.env.
	ErrVersions = errors.New("bad versions.env")
	// ErrMarkers means appliance.sh lacks the generated-block markers.
	ErrMarkers = errors.New("appliance.sh: generated ONE_SERVICE_PARAMS markers")
)
