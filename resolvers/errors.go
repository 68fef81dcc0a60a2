package resolvers

import (
	"context"
	"errors"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"deidcorpus/apperr"
	"deidcorpus/store"
)

// ErrorPresenter maps service errors to GraphQL errors with extensions.code.
// Internal errors are logged and shown only as "internal error", so that no
// detail (and no PHI) leaks to a client.
func ErrorPresenter(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var gqlErr *gqlerror.Error
		if errors.As(err, &gqlErr) && gqlErr.Err == nil {
			// A parse or validation error of the query itself, or entgql's
			// node lookup, whose code is spelled like ours.
			if gqlErr.Extensions["code"] == "NOT_FOUND" {
				gqlErr.Extensions["code"] = string(apperr.NotFound)
			}
			return gqlErr
		}
		err = store.Coded(err)
		code := apperr.CodeOf(err)
		out := graphql.DefaultErrorPresenter(ctx, err)
		if code == apperr.Internal {
			logger.ErrorContext(ctx, "graphql request failed", "path", out.Path.String(), "err", err)
			out.Message = "internal error"
		}
		if out.Extensions == nil {
			out.Extensions = map[string]any{}
		}
		out.Extensions["code"] = string(code)
		return out
	}
}
