package certgrant

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"filippo.io/age"
)

// A joining master presents its recipient at its own address, not only in
// OneGate: any VM of the service can write a sibling's USER_TEMPLATE, but
// oned alone says which VM holds which NIC address (docs/trust.md). The
// acting master reads the presentation from the joiner's address as oned
// reports it and seals the grant to what it read there.

// PresentPort is the TCP port the joining master's presentation listens on
// while it waits for its grant: the API port's neighbour (6443, and 6444
// for the local balancer).
const PresentPort = 6445

// PresentPath is the presentation's URL path.
const PresentPath = "/recipient"

// presentMagic opens a presentation; a new format gets a new line.
const presentMagic = "onekube-cp-recipient/1"

// maxPresentation bounds what the acting master reads; a real one is
// about 100 bytes.
const maxPresentation = 1024

// Presentation is what a joining master serves: its VM ID and the age
// recipient of this join attempt.
type Presentation struct {
	VMID      int
	Recipient string
}

// Marshal is the served form: three lines, "onekube-cp-recipient/1",
// "vm <id>", "recipient <age1...>".
func (p Presentation) Marshal() []byte {
	return fmt.Appendf(nil, "%s\nvm %d\nrecipient %s\n", presentMagic, p.VMID, p.Recipient)
}

// CheckPresentation parses what was served at a joining master's address
// and checks it names vmid. Anything else, an unknown format, a second
// line of a kind, a malformed recipient, is refused: the answer came over
// the network, from whoever holds that address.
func CheckPresentation(b []byte, vmid int) (Presentation, error) {
	if len(b) > maxPresentation {
		return Presentation{}, fmt.Errorf("presentation of %d bytes, at most %d", len(b), maxPresentation)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 || lines[0] != presentMagic {
		return Presentation{}, errors.New("not a control-plane presentation")
	}
	vmField, ok := strings.CutPrefix(lines[1], "vm ")
	if !ok {
		return Presentation{}, errors.New("presentation without its VM ID")
	}
	id, err := strconv.Atoi(vmField)
	if err != nil || id < 0 || strconv.Itoa(id) != vmField {
		return Presentation{}, fmt.Errorf("presentation VM ID %q", truncate(vmField))
	}
	if id != vmid {
		return Presentation{}, fmt.Errorf("the address presents VM %d, not VM %d", id, vmid)
	}
	r, ok := strings.CutPrefix(lines[2], "recipient ")
	if !ok {
		return Presentation{}, errors.New("presentation without a recipient")
	}
	parsed, err := age.ParseX25519Recipient(r)
	if err != nil {
		return Presentation{}, fmt.Errorf("presentation recipient: %w", err)
	}
	if parsed.String() != r {
		return Presentation{}, errors.New("presentation recipient is not in canonical form")
	}
	if bytes.ContainsAny(b, "\r\x00") {
		return Presentation{}, errors.New("presentation with control characters")
	}
	return Presentation{VMID: id, Recipient: r}, nil
}

func truncate(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}
