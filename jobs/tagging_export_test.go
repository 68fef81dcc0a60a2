package jobs

// SetTagTesting makes tag jobs read batches of about batch documents in
// parts of about part, and call after with the documents a part has done
// after each of its batches (an error fails the part there), until the
// returned function is called.
func SetTagTesting(batch, part int, after func(done int) error) (restore func()) {
	tagTesting.Store(&tagTest{batch: batch, part: part, after: after})
	return func() { tagTesting.Store(nil) }
}
