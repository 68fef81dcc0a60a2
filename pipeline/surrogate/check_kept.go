package surrogate

// classify tells what the check makes of a span pair of document doc: a
// value left in place by the policy's choice (a strategy that keeps it, an
// item kept for review, an age HIPAA does not count), a vague date, or a
// value the run was to replace.
func classify(pr spanPair, doc string, rd dateReading, keptForReview func(doc string, start int) bool) spanClass {
	st := pr.rule.Strategy
	if pr.o.Text == pr.s.Text && (pr.rule.kept(pr.o.Text) || st == Age || st == DepartmentS || keptForReview(doc, pr.o.Start)) {
		return keptSpan
	}
	// HIPAA counts ages of 90 and over only: a younger original age
	// (replaced because the patient's ages moved) identifies no one.
	if st == Age {
		if n, _, _, ok := ageYears(pr.o.Text); !ok || n <= 90 {
			return keptSpan
		}
	}
	// A weekday, month or season alone names one of a handful of values: it
	// identifies no one, and the shifted value often equals another of the
	// patient's originals. Its shift is still checked (checkIntervals); it is
	// neither a leak nor a surrogate equal to an original.
	if st == DateShift && vague(pr.o.Text, rd) {
		return vagueDate
	}
	return replacedSpan
}

// keptValues counts the values of the spans kept, by type and value, and
// returns them as a set too.
func keptValues(pairs []spanPair) (map[[2]string]int, *valueSet) {
	counts := map[[2]string]int{}
	set := newValueSet()
	for _, pr := range pairs {
		if pr.class == keptSpan {
			counts[[2]string{pr.o.Type, pr.o.Text}]++
			set.add(pr.o.Text)
		}
	}
	return counts, set
}
