package server_test

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"deidcorpus/auth"
	"deidcorpus/resolvers"
	"deidcorpus/store/storetest"
)

// TestRuleArgumentsExist: every argument path of a GraphQL operation's rule
// (auth/rules.go: "input.corpus") names an argument of the field, and each
// step after the first a field of the input object before it. A path
// misspelt, or left behind by a renamed argument, is never checked: Check
// finds nothing there and lets the operation through.
func TestRuleArgumentsExist(t *testing.T) {
	schema := resolvers.NewSchema(storetest.Open(t, storetest.SQLite), nil).Schema()
	roots := map[string]*ast.Definition{"Query": schema.Query, "Mutation": schema.Mutation, "Subscription": schema.Subscription}
	n := 0
	for _, op := range auth.Operations() {
		root, name, _ := strings.Cut(op, ".")
		def, ok := roots[root]
		if !ok {
			continue // a download or a command line's operation
		}
		field := def.Fields.ForName(name)
		if field == nil {
			t.Errorf("%s: no such field", op)
			continue
		}
		r, _ := auth.RuleFor(op)
		paths := append(append(append(append(append(append(append([]string{}, r.Corpora...), r.Nodes...), r.Jobs...),
			r.Releases...), r.Models...), r.Texts...), r.NewModels...)
		if r.Self != "" {
			paths = append(paths, r.Self)
		}
		for _, path := range paths {
			n++
			parts := strings.Split(path, ".")
			arg := field.Arguments.ForName(parts[0])
			if arg == nil {
				t.Errorf("%s: rule names argument %q, which the field does not have", op, parts[0])
				continue
			}
			typ := arg.Type
			for _, part := range parts[1:] {
				in := schema.Types[typ.Name()]
				if in == nil || in.Kind != ast.InputObject || in.Fields.ForName(part) == nil {
					t.Errorf("%s: rule path %q: %s has no field %q", op, path, typ.Name(), part)
					break
				}
				typ = in.Fields.ForName(part).Type
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d argument paths checked", n)
	}
}
