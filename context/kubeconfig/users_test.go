package kubeconfig

import (
	"strings"
	"testing"
)

func TestParseUsers(t *testing.T) {
	t.Parallel()
	a, b := newAgeKey(t).Recipient().String(), newAgeKey(t).Recipient().String()
	_, sshLine := newSSHKey(t)
	sshCanon, _ := NormalizeRecipient(sshLine)
	admin, view := RoleClusterAdmin, RoleView
	for _, tc := range []struct {
		name     string
		raw      string
		want     []User
		problems int
	}{
		{"empty", "", nil, 0},
		{"owner without a recipient", "alice:", nil, 0},
		{"owner without a recipient, rendered with a role", "alice::cluster-admin", nil, 0},
		{"rendered at instantiate, no extra users", "alice:" + a + ":cluster-admin;", []User{{"alice", a, admin}}, 0},
		{"an old entry is view", "alice:" + a + ";", []User{{"alice", a, view}}, 0},
		{"two users and blanks", " alice:" + a + " : cluster-admin ; ;\nbob : " + b + "\n", []User{{"alice", a, admin}, {"bob", b, view}}, 0},
		{"explicit view", "bob:" + b + ":view", []User{{"bob", b, view}}, 0},
		{"ssh key with comment", "carol:" + sshLine, []User{{"carol", sshCanon, view}}, 0},
		{"ssh key with comment and role", "carol:" + sshLine + ":cluster-admin", []User{{"carol", sshCanon, admin}}, 0},
		{"ssh key with a colon in its comment", "carol:" + sshLine + " at:home", []User{{"carol", sshCanon, view}}, 0},
		{"unknown role is a problem, not view", "alice:" + a + ":admin;bob:" + b, []User{{"bob", b, view}}, 1},
		{"duplicate entry collapses", "alice:" + a + ";alice:" + a, []User{{"alice", a, view}}, 0},
		{"duplicate keeps the higher role", "alice:" + a + ";alice:" + a + ":cluster-admin", []User{{"alice", a, admin}}, 0},
		{"one name, two keys", "alice:" + a + ";alice:" + b, []User{{"alice", a, view}, {"alice", b, view}}, 0},
		{"typo keeps the others", "alice:" + a + ";bob" + b + ";carol:age1nope;system-x:" + b + ";dave:" + b,
			[]User{{"alice", a, view}, {"dave", b, view}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := ParseUsers(tc.raw)
			if len(got) != len(tc.want) {
				t.Fatalf("users %v, want %v (problems %v)", got, tc.want, problems)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("user %d = %v, want %v", i, got[i], tc.want[i])
				}
			}
			if len(problems) != tc.problems {
				t.Errorf("problems %q, want %d", problems, tc.problems)
			}
			for _, p := range problems {
				if strings.Contains(p, a) || strings.Contains(p, b) {
					t.Errorf("problem %q quotes a key", p)
				}
			}
		})
	}
	many := strings.Repeat("u:"+a+";", 2) + strings.Repeat("x", 10)
	if _, p := ParseUsers(many); len(p) != 1 {
		t.Errorf("entry without ':': problems %q", p)
	}
	var lots []string
	for i := range MaxUsers + 5 {
		lots = append(lots, "u"+strings.Repeat("a", i%50)+string(rune('a'+i%26))+":"+a)
	}
	users, p := ParseUsers(strings.Join(lots, ";"))
	if len(users) > MaxUsers || len(p) == 0 {
		t.Errorf("%d entries: kept %d, problems %q", len(lots), len(users), p)
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"alice": true, "Alice.Smith": true, "a": true, "bob@example.org": true, "u_1-2": true,
		"": false, "-a": false, "a-": false, "a:b": false, "a b": false, "a/b": false, "é": false,
		"system": false, "System-admin": false, "kube-admin": false, "kubernetes-admin": false,
		strings.Repeat("a", 64): true, strings.Repeat("a", 65): false,
	} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func FuzzParseUsers(f *testing.F) {
	f.Add("alice:age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq;bob:")
	f.Add("x:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDuAJnDPFm1r9fKKJfTByMWhgrwMHbjHaYsJ7H6ElOaD c")
	f.Add(";;\n:\n")
	f.Add("alice:age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq:cluster-admin;bob::view;c:x:y:z")
	f.Fuzz(func(t *testing.T, raw string) {
		users, _ := ParseUsers(raw)
		if len(users) > MaxUsers {
			t.Fatalf("%d users", len(users))
		}
		for _, u := range users {
			if CheckName(u.Name) != nil {
				t.Fatalf("kept bad name %q", u.Name)
			}
			if canon, err := NormalizeRecipient(u.Recipient); err != nil || canon != u.Recipient {
				t.Fatalf("kept a recipient that is not normalized: %v", err)
			}
			if CheckRole(u.MaxRole) != nil {
				t.Fatalf("kept an entry with maximum role %q", u.MaxRole)
			}
		}
	})
}

func TestAllows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		max, role string
		ok        bool
	}{
		{RoleClusterAdmin, RoleClusterAdmin, true}, {RoleClusterAdmin, RoleView, true},
		{RoleView, RoleView, true}, {RoleView, RoleClusterAdmin, false},
		{"", RoleView, false}, {RoleClusterAdmin, "admin", false}, {RoleClusterAdmin, "", false},
	} {
		if got := Allows(tc.max, tc.role); got != tc.ok {
			t.Errorf("Allows(%q, %q) = %v", tc.max, tc.role, got)
		}
	}
}
