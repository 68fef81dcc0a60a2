package server

import (
	"context"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2/ast"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/store"
)

// phiFields are the GraphQL fields whose values are original PHI (or may be):
// reading any of them is written to the audit log.
var phiFields = map[string]bool{
	"Document.text":             true,
	"Span.text":                 true,
	"SurrogateMapping.original": true,
	"Query.checkReport":         true,
	"IDPair.source":             true, // a source's note and patient ids are record numbers
	"Query.releaseDiff":         true, // names the span texts added, removed or relabelled
}

// auditLog records, once per GraphQL operation, every PHI field it read
// (one entry per field, with the ids of the objects read) and every mutation
// it ran (one entry per mutation field).
type auditLog struct {
	mu     sync.Mutex
	reads  map[string]map[string]bool // target -> ids
	writes []store.AuditRecord
}

type auditKey struct{}

func (a *auditLog) read(target, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reads == nil {
		a.reads = map[string]map[string]bool{}
	}
	if a.reads[target] == nil {
		a.reads[target] = map[string]bool{}
	}
	if id != "" {
		a.reads[target][id] = true
	}
}

func (a *auditLog) write(r store.AuditRecord) {
	a.mu.Lock()
	a.writes = append(a.writes, r)
	a.mu.Unlock()
}

func (a *auditLog) records(actor string) []store.AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []store.AuditRecord
	targets := make([]string, 0, len(a.reads))
	for t := range a.reads {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		ids := make([]string, 0, len(a.reads[t]))
		for id := range a.reads[t] {
			ids = append(ids, id)
		}
		out = append(out, store.AuditRecord{Actor: actor, Action: "read", Target: t, IDs: ids})
	}
	for _, w := range a.writes {
		w.Actor = actor
		out = append(out, w)
	}
	return out
}

// auditGraphQL installs the audit middleware on the GraphQL server.
func auditGraphQL(srv *handler.Server, st *store.Store, logger *slog.Logger) {
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
			return next(ctx) // subscriptions stream job states, no PHI
		}
		log := &auditLog{}
		ctx = context.WithValue(ctx, auditKey{}, log)
		respond := next(ctx)
		done := false
		return func(ctx context.Context) *graphql.Response {
			resp := respond(ctx)
			if !done {
				done = true
				for _, r := range log.records(auth.Name(ctx)) {
					if err := st.Audit(context.WithoutCancel(ctx), r); err != nil {
						logger.Error("write audit log", "target", r.Target, "err", err)
					}
				}
			}
			return resp
		}
	})
	srv.AroundRootFields(func(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
		fc := graphql.GetRootFieldContext(ctx)
		oc := graphql.GetOperationContext(ctx)
		log, ok := ctx.Value(auditKey{}).(*auditLog)
		if !ok || oc.Operation.Operation != ast.Mutation {
			return next(ctx)
		}
		// Mutations run one after another and their resolvers have run when
		// next returns: a refused one is recorded as denied, not as a write.
		out := next(ctx)
		args := make([]string, 0, len(fc.Field.Arguments))
		for _, a := range fc.Field.Arguments {
			args = append(args, a.Name)
		}
		r := store.AuditRecord{Action: "write", Target: "Mutation." + fc.Field.Name, Detail: "arguments: " + strings.Join(args, ", ")}
		code := rootFieldError(ctx, fc.Field.Alias)
		switch {
		case code == "" && selfAudited[fc.Field.Name]:
			return out // its own entry says more
		case code == string(apperr.Forbidden) || code == string(apperr.NotFound):
			r.Action = "denied"
			fallthrough
		case code != "":
			r.Detail += " (refused: " + code + ")"
		}
		log.write(r)
		return out
	})
	srv.AroundFields(func(ctx context.Context, next graphql.Resolver) (any, error) {
		fc := graphql.GetFieldContext(ctx)
		if target := fc.Object + "." + fc.Field.Name; phiFields[target] {
			if log, ok := ctx.Value(auditKey{}).(*auditLog); ok {
				log.read(target, parentID(fc))
			}
		}
		return next(ctx)
	})
}

// selfAudited are the mutations whose service writes their audit entry
// itself (store/annotate.go: one per edit, naming the span and its offsets
// and labels before and after): done, they get no second, generic entry;
// refused, they get the generic one (the service wrote none).
var selfAudited = map[string]bool{"addSpan": true, "changeSpan": true, "removeSpan": true,
	"setDocumentStatus": true, "undoEdit": true, "acceptSpan": true}

// rootFieldError is the code of the error the root field named alias ended
// with, "" if none.
func rootFieldError(ctx context.Context, alias string) string {
	for _, e := range graphql.GetErrors(ctx) {
		if len(e.Path) > 0 && e.Path[0] == ast.PathName(alias) {
			if code, ok := e.Extensions["code"].(string); ok {
				return code
			}
			return string(apperr.Internal)
		}
	}
	return ""
}

// parentID is the id of the object whose field is read.
func parentID(fc *graphql.FieldContext) string {
	if fc.Parent == nil {
		return ""
	}
	// An element of a list ([Span!]) is held as a pointer to the slice's
	// element.
	result := fc.Parent.Result
	switch o := result.(type) {
	case **ent.Document:
		result = *o
	case **ent.Span:
		result = *o
	case **ent.SurrogateMapping:
		result = *o
	}
	switch o := result.(type) {
	case *ent.Document:
		return strconv.Itoa(o.ID)
	case *ent.Span:
		return strconv.Itoa(o.ID)
	case *ent.SurrogateMapping:
		return strconv.Itoa(o.ID)
	}
	// A root field (checkReport): its arguments name what was read.
	return store.DescribeArgs(fc.Args)
}
