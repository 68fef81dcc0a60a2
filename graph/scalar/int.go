// Package scalar holds the GraphQL API's own scalar marshalling: Int read
// within the 32 bits the GraphQL specification gives it, whatever the size
// of the Go int it lands in (gqlgen.yml binds Int here).
package scalar

import (
	"context"
	"io"
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"deidcorpus/apperr"
)

// MarshalInt writes an Int.
func MarshalInt(i int) graphql.ContextMarshaler { return MarshalInt64(int64(i)) }

// UnmarshalInt reads an Int argument or input field, refusing a value beyond
// 32 bits (first: 99999999999) rather than passing it on as a 64-bit int.
func UnmarshalInt(ctx context.Context, v any) (int, error) {
	n, err := UnmarshalInt64(ctx, v)
	return int(n), err
}

// MarshalInt64 writes an Int held in an int64 column.
func MarshalInt64(i int64) graphql.ContextMarshaler {
	return graphql.ContextWriterFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, strconv.FormatInt(i, 10))
		return err
	})
}

// UnmarshalInt64 reads an Int bound to an int64 (filters on such columns)
// within the same 32 bits.
func UnmarshalInt64(ctx context.Context, v any) (int64, error) {
	name := graphql.GetPath(ctx).String()
	if name == "" {
		name = "an Int"
	}
	n, err := graphql.UnmarshalInt64(v)
	if err != nil {
		return 0, apperr.New(apperr.Invalid, "%s must be an integer from %d to %d", name, math.MinInt32, math.MaxInt32)
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, apperr.New(apperr.Invalid, "%s is %d, out of the range of a GraphQL Int (%d to %d)", name, n, math.MinInt32, math.MaxInt32)
	}
	return n, nil
}
