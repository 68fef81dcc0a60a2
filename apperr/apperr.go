// Package apperr holds the application's error codes. Services return errors
// carrying a code; the GraphQL layer maps the code to extensions.code and the
// CLI to an exit status, in one place each.
package apperr

import (
	"errors"
	"fmt"
)

// Code classifies an error for clients.
type Code string

const (
	Invalid      Code = "invalid"
	NotFound     Code = "not_found"
	Conflict     Code = "conflict"
	Unauthorized Code = "unauthorized"
	Forbidden    Code = "forbidden"
	TooMany      Code = "too_many_requests" // over the rate limit
	Internal     Code = "internal"
)

// Error is an error with a code and a message safe to show to the client.
type Error struct {
	Code Code
	Msg  string
	Err  error // the cause, if any; its text is part of Msg for non-internal codes
}

func (e *Error) Error() string {
	if e.Err != nil && e.Msg == "" {
		return e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// New makes a coded error with a formatted message.
func New(code Code, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Wrap gives err a code, keeping its message; nil stays nil.
func Wrap(code Code, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// CodeOf returns the code of the first coded error in err's chain, or Internal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// ExitStatus is the CLI exit status for an error.
func ExitStatus(err error) int {
	switch CodeOf(err) {
	case Invalid:
		return 2
	case NotFound:
		return 3
	case Conflict:
		return 4
	case Unauthorized, Forbidden:
		return 5
	}
	return 1
}
