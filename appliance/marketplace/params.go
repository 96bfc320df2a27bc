package marketplace

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/onekube/onekube/flow"
)

// Markers around the generated block in appliance.sh.
const (
	paramsBegin = "# BEGIN GENERATED ONE_SERVICE_PARAMS\n"
	paramsEnd   = "# END GENERATED ONE_SERVICE_PARAMS\n"
)

// ParamsBlock renders the one-apps ONE_SERVICE_PARAMS array (name, stage,
// description, M|O and type, four words per input) for inputs. The stage is
// "bootstrap": onekube-agent reads them when it bootstraps the node.
func ParamsBlock(inputs []flow.UserInput) string {
	width := 0
	for _, u := range inputs {
		width = max(width, len(shellQuote(u.Name)))
	}
	var b strings.Builder
	b.WriteString("ONE_SERVICE_PARAMS=(\n")
	for _, u := range inputs {
		mo := "O"
		if u.Mandatory {
			mo = "M"
		}
		fmt.Fprintf(&b, "    %-*s %s %s %s\n", width, shellQuote(u.Name), shellQuote("bootstrap"),
			shellQuote(u.Description), shellQuote(mo+"|"+u.Type))
	}
	b.WriteString(")\n")
	return b.String()
}

// SpliceParams replaces the generated block of appliance.sh with block.
func SpliceParams(applianceSh []byte, block string) ([]byte, error) {
	i := bytes.Index(applianceSh, []byte(paramsBegin))
	j := bytes.Index(applianceSh, []byte(paramsEnd))
	if i < 0 || j < i || bytes.Count(applianceSh, []byte(paramsBegin)) != 1 {
		return nil, fmt.Errorf("%w: want one %q line before one %q line", ErrMarkers,
			strings.TrimSpace(paramsBegin), strings.TrimSpace(paramsEnd))
	}
	var out bytes.Buffer
	out.Write(applianceSh[:i+len(paramsBegin)])
	out.WriteString(block)
	out.Write(applianceSh[j:])
	return out.Bytes(), nil
}

// shellQuote single-quotes s for bash; a quote inside becomes '"'"'.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
