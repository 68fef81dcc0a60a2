package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"deidcorpus/store"
)

// selectionLimit refuses, before the query is validated, one longer than
// tokens, one whose fields (fragments counted where they are spread) are
// more than fields, and one that selects a response name more than repeats
// times in one selection set (fields of one name merged, as execution merges
// them). Validation compares every pair of fields of one response name
// (OverlappingFieldsCanBeMerged), so `{me{name name …}}` costs the square of
// its length: 10,000 repeats took 8.5 s, and neither the request's deadline
// nor a shutdown stops it. The complexity and depth limits come after
// validation, too late for that. A limit of 0 is none.
type selectionLimit struct{ tokens, fields, repeats int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = selectionLimit{}

func (selectionLimit) ExtensionName() string                   { return "SelectionLimit" }
func (selectionLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters parses the query within the token limit (the
// executor parses it again, or finds it in its cache: parsing is linear and
// bounded by the limit) and counts its selections.
func (l selectionLimit) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, l.tokens)
	var gerr *gqlerror.Error
	switch {
	case errors.As(err, &gerr) && strings.Contains(gerr.Message, "token limit"):
		return invalidQuery("the query is longer than %d tokens, the most the server parses", l.tokens)
	case err != nil:
		return nil // a syntax error: the executor reports it
	}
	c := selectionCounter{limit: l, frags: doc.Fragments, visiting: map[string]bool{}}
	for _, op := range doc.Operations {
		if msg := c.check([]ast.SelectionSet{op.SelectionSet}); msg != "" {
			return invalidQuery("%s", msg)
		}
	}
	return nil
}

func invalidQuery(format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": "invalid"}
	return err
}

// selectionCounter walks an operation as execution collects its fields.
type selectionCounter struct {
	limit    selectionLimit
	frags    ast.FragmentDefinitionList
	visiting map[string]bool // fragments being spread (a cycle is the validator's to report)
	seen     int             // fields visited, fragments spread where they are used
}

// check collects the fields of sets (one merged selection set) by response
// name, then checks each name's merged subselections; it says what is over
// a limit, "" if nothing is. It visits at most limit.fields fields.
func (c *selectionCounter) check(sets []ast.SelectionSet) string {
	groups := map[string][]ast.SelectionSet{}
	var names []string
	counts := map[string]int{}
	var collect func(set ast.SelectionSet) string
	collect = func(set ast.SelectionSet) string {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				if c.seen++; c.limit.fields > 0 && c.seen > c.limit.fields {
					return fmt.Sprintf("the query selects more than %d fields (fragments counted where they are spread)", c.limit.fields)
				}
				name := s.Alias
				if name == "" {
					name = s.Name
				}
				if counts[name]++; c.limit.repeats > 0 && counts[name] > c.limit.repeats {
					return fmt.Sprintf("the query selects %q more than %d times in one selection set", name, c.limit.repeats)
				}
				if counts[name] == 1 {
					names = append(names, name)
				}
				if len(s.SelectionSet) > 0 {
					groups[name] = append(groups[name], s.SelectionSet)
				}
			case *ast.InlineFragment:
				if msg := collect(s.SelectionSet); msg != "" {
					return msg
				}
			case *ast.FragmentSpread:
				f := c.frags.ForName(s.Name)
				if f == nil || c.visiting[s.Name] {
					continue
				}
				c.visiting[s.Name] = true
				msg := collect(f.SelectionSet)
				delete(c.visiting, s.Name)
				if msg != "" {
					return msg
				}
			}
		}
		return ""
	}
	for _, set := range sets {
		if msg := collect(set); msg != "" {
			return msg
		}
	}
	for _, name := range names {
		if subs := groups[name]; len(subs) > 0 {
			if msg := c.check(subs); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// pageLimit refuses an operation that asks any field for a page (first or
// last) larger than store.MaxPage, before anything runs: a connection's
// nested pages are loaded with it (entgql collects them), before their own
// resolvers would see their arguments.
type pageLimit struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = pageLimit{}

func (pageLimit) ExtensionName() string                   { return "PageLimit" }
func (pageLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (pageLimit) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Doc.Operations.ForName(opCtx.OperationName)
	if op == nil {
		return nil
	}
	if err := checkPages(op.SelectionSet, opCtx.Doc.Fragments, opCtx.Variables, map[string]bool{}); err != nil {
		return invalidQuery("%s", err.Error())
	}
	return nil
}

// checkPages checks the page arguments of every field of set, fragments
// included (selectionLimit bounds how many there are).
func checkPages(set ast.SelectionSet, frags ast.FragmentDefinitionList, vars map[string]any, visiting map[string]bool) error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			args := s.ArgumentMap(vars)
			for _, arg := range []string{"first", "last"} {
				if n, ok := intArg(args[arg]); ok {
					if err := store.CheckPage(s.Name+"("+arg+")", n); err != nil {
						return err
					}
				}
			}
			if err := checkPages(s.SelectionSet, frags, vars, visiting); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := checkPages(s.SelectionSet, frags, vars, visiting); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if f := frags.ForName(s.Name); f != nil && !visiting[s.Name] {
				visiting[s.Name] = true
				err := checkPages(f.SelectionSet, frags, vars, visiting)
				delete(visiting, s.Name)
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// intArg reads an Int argument as a literal (int64) or a variable (as its
// transport decoded it) gives it; a number past a GraphQL Int's range is
// left to the Int check, whose error names the range.
func intArg(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, n >= math.MinInt32 && n <= math.MaxInt32
	case int64:
		return int(n), n >= math.MinInt32 && n <= math.MaxInt32
	case float64:
		return int(n), n >= math.MinInt32 && n <= math.MaxInt32
	case json.Number:
		if f, err := n.Float64(); err == nil {
			return intArg(f)
		}
	}
	return 0, false
}
