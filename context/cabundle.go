package context

import (
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// OneGateCA returns the PEM bundle of KeyOneGateCA, nil when unset. The
// value may be the PEM text itself or its base64 (OpenNebula templates
// carry multi-line values poorly). Every block must be a certificate.
func (v Vars) OneGateCA() ([]byte, error) {
	raw := v.Get(KeyOneGateCA)
	if raw == "" {
		return nil, nil
	}
	b := []byte(raw)
	if !strings.HasPrefix(raw, "-----BEGIN") {
		dec, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(raw), ""))
		if err != nil {
			return nil, &SettingError{Key: KeyOneGateCA, Msg: "neither PEM nor base64 of PEM"}
		}
		b = dec
	}
	n, rest := 0, b
	for {
		blk, r := pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return nil, &SettingError{Key: KeyOneGateCA, Msg: fmt.Sprintf("holds a %q block; only certificates belong there", blk.Type)}
		}
		n, rest = n+1, r
	}
	if n == 0 {
		return nil, &SettingError{Key: KeyOneGateCA, Msg: errors.New("holds no PEM certificate").Error()}
	}
	return b, nil
}
