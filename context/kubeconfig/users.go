package kubeconfig

import (
	"fmt"
	"strings"
)

// User is one authorized entry: a name for the certificate and the
// recipient its kubeconfig is sealed to. One name may have several
// recipients (a laptop's age key and an SSH key); each request picks one.
type User struct {
	Name      string
	Recipient string // normalized (NormalizeRecipient)
}

// Limits of the authorized list: it lives in CONTEXT, where kilobytes are
// plenty, and a master parses it at every request.
const (
	maxUsersText = 64 << 10
	MaxUsers     = 64
)

// ParseUsers reads the authorized list (KeyKubeconfigUsers): entries
// name:recipient, separated by ';' or line breaks, blanks around them
// ignored. An entry with an empty recipient is skipped without complaint:
// it is the owner's part when their user template has no
// ONEKUBE_AGE_RECIPIENT ($USER[...] is then empty). A malformed entry is
// skipped and reported in problems, so one typo does not lock the other
// users out; problems name the entry by position and name, never its key.
func ParseUsers(raw string) (users []User, problems []string) {
	if len(raw) > maxUsersText {
		return nil, []string{fmt.Sprintf("the list is longer than %d KiB; nothing in it is used", maxUsersText>>10)}
	}
	seen := map[User]bool{}
	n := 0
	for i, e := range strings.FieldsFunc(raw, func(r rune) bool { return r == ';' || r == '\n' || r == '\r' }) {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		name, rcpt, ok := strings.Cut(e, ":")
		name, rcpt = strings.TrimSpace(name), strings.TrimSpace(rcpt)
		if !ok {
			problems = append(problems, fmt.Sprintf("entry %d: want name:recipient", i+1))
			continue
		}
		if rcpt == "" {
			continue
		}
		if err := CheckName(name); err != nil {
			problems = append(problems, fmt.Sprintf("entry %d: %v", i+1, err))
			continue
		}
		canon, err := NormalizeRecipient(rcpt)
		if err != nil {
			problems = append(problems, fmt.Sprintf("entry %d (%s): %v", i+1, name, err))
			continue
		}
		u := User{Name: name, Recipient: canon}
		if seen[u] {
			continue
		}
		if n == MaxUsers {
			problems = append(problems, fmt.Sprintf("more than %d entries; the rest are ignored", MaxUsers))
			break
		}
		seen[u] = true
		users = append(users, u)
		n++
	}
	return users, problems
}

// Authorized reports whether name may get a kubeconfig sealed to
// recipient (normalized).
func Authorized(users []User, name, recipient string) bool {
	for _, u := range users {
		if u.Name == name && u.Recipient == recipient {
			return true
		}
	}
	return false
}

// ByRecipient returns the entries sealed to recipient (normalized).
func ByRecipient(users []User, recipient string) []User {
	var out []User
	for _, u := range users {
		if u.Recipient == recipient {
			out = append(out, u)
		}
	}
	return out
}

// FormatUsers renders entries in the list's syntax, one per line.
func FormatUsers(users []User) string {
	var b strings.Builder
	for i, u := range users {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(u.Name + ":" + u.Recipient)
	}
	return b.String()
}
