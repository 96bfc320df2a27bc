package protocol

// Trust is who can have written a value.
type Trust string

const (
	// Vouched values come from oned or OneFlow state no VM can forge: the
	// caller's VM ID, STATE/LCM_STATE, NIC addresses, roles[].nodes.
	Vouched Trust = "vouched"
	// Owner values are the VM owner's word: CONTEXT, set at instantiate or
	// with one.vm.updateconf. Every sibling can read them.
	Owner Trust = "owner"
	// ClaimTrust values live in USER_TEMPLATE: any VM of the service can
	// have written them.
	ClaimTrust Trust = "claim"
)

// Status is where onekube stands against a forger of the key.
type Status string

const (
	Held Status = "held" // a forger gains nothing beyond the listed effect
	Open Status = "open" // issue 20 tracks what a forger still gains
)

// Key is one row of docs/trust.md's table.
type Key struct {
	Name      string // as the table's first column shows it
	Writer    string
	Readers   string
	Trust     Trust
	ForgerGet string
	Status    Status
}
