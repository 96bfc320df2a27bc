package protocol

// Claim is a value read from a VM's USER_TEMPLATE. Any VM of the service
// can write any sibling's USER_TEMPLATE through OneGate (update_by_id), and
// the restricted-attribute check is bypassed by a leading tab
// (shared/reference/onegate-trust.md), so a Claim says what somebody wrote,
// not who wrote it. It is a type of its own so that handing a secret to an
// identity read from a Claim takes an explicit, reviewable Unverified().
type Claim struct{ v string }

// ClaimOf marks a USER_TEMPLATE value as a claim.
func ClaimOf(v string) Claim { return Claim{v: v} }

// Unverified is the raw text. Call it only where the value's writer does
// not matter (display, a hint checked afterwards against vouched state);
// say why in a comment.
func (c Claim) Unverified() string { return c.v }

// Empty reports whether nothing (or only blanks) was claimed.
func (c Claim) Empty() bool {
	for _, r := range c.v {
		if r != ' ' && r != '\t' && r != '\r' && r != '\n' {
			return false
		}
	}
	return true
}

// String never prints the value: a Claim may hold a token a sibling copied
// into it, and a log line is not the place to find out.
func (c Claim) String() string { return "<claim>" }
