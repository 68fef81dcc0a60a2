package resolvers

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"deidcorpus/apperr"
	"deidcorpus/store"
)

// undecodableBody begins gqlgen's error for a request body that is not JSON.
const undecodableBody = "json request body could not be decoded"

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
			if msg, _, ok := strings.Cut(gqlErr.Message, " body:"); ok && strings.HasPrefix(msg, undecodableBody) {
				// The transport quotes the request body, which may hold a
				// note's text: the sender gets the reason only.
				gqlErr.Message = msg
				if gqlErr.Extensions == nil {
					gqlErr.Extensions = map[string]any{}
				}
				gqlErr.Extensions["code"] = string(apperr.Invalid)
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
