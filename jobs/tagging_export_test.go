package jobs

// SetTagTesting makes tag jobs read batches of about batch documents and
// call after with the documents done after each batch (an error fails the
// job there), until the returned function is called.
func SetTagTesting(batch int, after func(done int) error) (restore func()) {
	tagTesting.Store(&tagTest{batch: batch, after: after})
	return func() { tagTesting.Store(nil) }
}
