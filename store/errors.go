package store

import (
	"errors"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/ent"
)

// Coded gives an error from the database layer its application code: a
// missing row is not_found, a broken uniqueness or foreign key conflict, a
// field ent rejects invalid. An error that has a code keeps it, and others
// stay internal. It is the one translation of ent's errors: the store's
// transactions apply it, and so do the GraphQL error presenter, the download
// handlers and the CLI for the errors of code that reaches ent directly, so
// that one failure gets one code wherever it shows.
func Coded(err error) error {
	var coded *apperr.Error
	if err == nil || errors.As(err, &coded) {
		return err
	}
	var nf *ent.NotFoundError
	var ve *ent.ValidationError
	switch {
	case errors.As(err, &nf):
		return &apperr.Error{Code: apperr.NotFound, Msg: strings.TrimPrefix(nf.Error(), "ent: "), Err: err}
	case errors.As(err, &ve):
		return &apperr.Error{Code: apperr.Invalid, Msg: strings.TrimPrefix(ve.Error(), "ent: "), Err: err}
	case ent.IsConstraintError(err):
		// Not the database's message: it names tables and columns.
		return &apperr.Error{Code: apperr.Conflict, Msg: "the change conflicts with existing data", Err: err}
	}
	return err
}
