package register

// Owner is an OpenNebula user: whose templates Create may find, update or
// point a service at.
type Owner struct {
	ID   int
	Name string
}

// mine keeps the documents docs owned by o. A pool as oneadmin sees it
// holds every user's templates, and names are unique only per owner, so
// looking a name up anywhere else could update another user's template or
// point the service at it.
func mine(docs []Document, owns func(Document) bool) []Document {
	var out []Document
	for _, d := range docs {
		if owns(d) {
			out = append(out, d)
		}
	}
	return out
}

// ownedBy matches documents of the user with o's ID.
func ownedBy(o Owner) func(Document) bool {
	return func(d Document) bool { return d.UID >= 0 && d.UID == o.ID }
}

// ownedByName matches documents whose owner is called name (user names
// are unique in OpenNebula): the OneFlow user when it is not the oned one.
func ownedByName(name string) func(Document) bool {
	return func(d Document) bool { return d.UName != "" && d.UName == name }
}
