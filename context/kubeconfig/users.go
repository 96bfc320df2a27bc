package kubeconfig

import (
	"fmt"
	"strings"
)

// User is one authorized entry: a name for the certificate, the recipient
// its kubeconfig is sealed to, and the most the entry may ask for. One
// name may have several recipients (a laptop's age key and an SSH key);
// each request picks one.
type User struct {
	Name      string
	Recipient string // normalized (NormalizeRecipient)
	MaxRole   string // one of Roles; DefaultMaxRole when the entry names none
}

// Limits of the authorized list: it lives in CONTEXT, where kilobytes are
// plenty, and a master parses it at every request.
const (
	maxUsersText = 64 << 10
	MaxUsers     = 64
)

// ParseUsers reads the authorized list (KeyKubeconfigUsers): entries
// name:recipient[:maxrole], separated by ';' or line breaks, blanks around
// them ignored. An entry without maxrole may ask for DefaultMaxRole only.
// The same name and recipient listed twice keeps the higher role. An entry with an empty recipient is skipped without complaint:
// it is the owner's part when their user template has no
// ONEKUBE_AGE_RECIPIENT ($USER[...] is then empty). A malformed entry is
// skipped and reported in problems, so one typo does not lock the other
// users out; problems name the entry by position and name, never its key.
func ParseUsers(raw string) (users []User, problems []string) {
	if len(raw) > maxUsersText {
		return nil, []string{fmt.Sprintf("the list is longer than %d KiB; nothing in it is used", maxUsersText>>10)}
	}
	type pair struct{ name, rcpt string }
	seen := map[pair]int{} // index in users
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
		rcpt, maxRole, err := cutRole(rcpt)
		if err != nil {
			problems = append(problems, fmt.Sprintf("entry %d (%s): %v", i+1, SafeText(name, maxName), err))
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
		if j, ok := seen[pair{name, canon}]; ok {
			if rank(maxRole) > rank(users[j].MaxRole) {
				users[j].MaxRole = maxRole
			}
			continue
		}
		if len(users) == MaxUsers {
			problems = append(problems, fmt.Sprintf("more than %d entries; the rest are ignored", MaxUsers))
			break
		}
		seen[pair{name, canon}] = len(users)
		users = append(users, User{Name: name, Recipient: canon, MaxRole: maxRole})
	}
	return users, problems
}

// cutRole splits an entry's ":maxrole" suffix off its recipient. A
// recipient never holds a colon (age1... is bech32, an SSH key base64)
// except in an SSH key's comment, so a last colon followed by something
// other than a role is a typo when nothing else can explain it: an
// unknown role is an error, never silently the default.
func cutRole(rcpt string) (string, string, error) {
	i := strings.LastIndexByte(rcpt, ':')
	if i < 0 {
		return rcpt, DefaultMaxRole, nil
	}
	tail := strings.TrimSpace(rcpt[i+1:])
	if CheckRole(tail) == nil {
		return strings.TrimSpace(rcpt[:i]), tail, nil
	}
	if f := strings.Fields(rcpt[:i]); len(f) >= 3 && !strings.HasPrefix(rcpt, "age1") {
		return rcpt, DefaultMaxRole, nil // a colon in an SSH key's comment
	}
	return "", "", fmt.Errorf("unknown maximum role %q (want %s)", SafeText(tail, 20), strings.Join(Roles, " or "))
}

// Lookup finds the entry of name with recipient (normalized).
func Lookup(users []User, name, recipient string) (User, bool) {
	for _, u := range users {
		if u.Name == name && u.Recipient == recipient {
			return u, true
		}
	}
	return User{}, false
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
		if u.MaxRole != "" && u.MaxRole != DefaultMaxRole {
			b.WriteString(":" + u.MaxRole)
		}
	}
	return b.String()
}
