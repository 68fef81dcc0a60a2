package store

import "deidcorpus/apperr"

// MaxPage is the most rows one page of a list may ask for: the first or
// last of every GraphQL connection (checked for the whole operation before
// it runs, server/limits.go), the annotation queue and the surrogate
// mappings. A page is read and encoded whole, so a larger one is a way to
// hold the server's memory; a caller that wants more follows the cursor.
const MaxPage = 1000

// CheckPage refuses a page size out of [1, MaxPage], naming the argument.
func CheckPage(arg string, n int) error {
	if n < 1 || n > MaxPage {
		return apperr.New(apperr.Invalid, "%s: %d is out of range: a page holds 1 to %d rows (follow the cursor or offset for more)", arg, n, MaxPage)
	}
	return nil
}
