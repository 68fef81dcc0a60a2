package jobs

// SetResynthesisBatches makes resynthesis read n notes a batch and call
// saved after each batch it saves, until the test ends.
func SetResynthesisBatches(n int, saved func(int) error) (restore func()) {
	oldN, oldSaved := batchSize, batchSaved
	batchSize, batchSaved = n, saved
	return func() { batchSize, batchSaved = oldN, oldSaved }
}
