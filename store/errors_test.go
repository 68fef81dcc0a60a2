package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestCodedErrors checks the one translation of ent's errors on real ones:
// a missing row, a broken uniqueness, a field ent rejects; coded errors and
// others pass through.
func TestCodedErrors(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, b)
			_, err := s.Client.Corpus.Get(ctx, 1<<40)
			require.Error(t, err)
			assert.Equal(t, apperr.NotFound, apperr.CodeOf(store.Coded(err)))
			assert.Equal(t, "corpus not found", store.Coded(err).Error())

			require.NoError(t, s.Client.Corpus.Create().SetName("c").Exec(ctx))
			err = s.Client.Corpus.Create().SetName("c").Exec(ctx)
			require.Error(t, err)
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(store.Coded(err)))
			assert.NotContains(t, store.Coded(err).Error(), "corpora", "no table names")

			err = s.Client.Corpus.Create().SetName("").Exec(ctx)
			require.Error(t, err)
			assert.Equal(t, apperr.Invalid, apperr.CodeOf(store.Coded(err)))

			coded := apperr.New(apperr.Forbidden, "no")
			assert.Same(t, coded, store.Coded(coded))
			plain := errors.New("disk on fire")
			assert.Equal(t, apperr.Internal, apperr.CodeOf(store.Coded(plain)))
			assert.NoError(t, store.Coded(nil))
		})
	}
}
