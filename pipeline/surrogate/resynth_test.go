package surrogate

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

var (
	meddocanOnce sync.Once
	meddocanDocs []pipeline.Document
	meddocanErr  error
)

// meddocan reads MEDDOCAN train in its i2b2 form (one patient per document).
func meddocan(tb testing.TB) []pipeline.Document {
	dir := shared.Path(tb, "meddocan-i2b2/train")
	meddocanOnce.Do(func() {
		files, err := formats.ReadPaths(dir)
		if err != nil {
			meddocanErr = err
			return
		}
		meddocanDocs, meddocanErr = formats.ReadI2B2(files, formats.ReadOptions{})
	})
	if meddocanErr != nil {
		tb.Fatal(meddocanErr)
	}
	return meddocanDocs
}

// assertClean fails on every problem Check reports and logs what it lists.
func assertClean(t *testing.T, orig []pipeline.Document, res *Result, pol *Policy) *Report {
	t.Helper()
	rep := Check(orig, res, pol)
	for i, p := range rep.Misaligned {
		if i < 5 {
			t.Errorf("misaligned: %s %s [%d:%d] %q at offsets %q", p.Doc, p.Type, p.Start, p.End, p.Text, p.AtOffsets)
		}
	}
	for i, l := range rep.Leaks {
		if i < 10 {
			t.Errorf("leak: %s %s %q at %d", l.Doc, l.Type, l.Value, l.Start)
		}
	}
	for i, l := range rep.Identifiers {
		if i < 10 {
			t.Errorf("%s %s (%s) in %s: %q at %d", l.Kind, l.ID, l.Patient, l.Doc, l.Value, l.Start)
		}
	}
	for i, c := range rep.Inconsistent {
		if i < 5 {
			t.Errorf("inconsistent: %+v", c)
		}
	}
	for i, e := range rep.IntervalErrors {
		if i < 5 {
			t.Errorf("interval: %+v", e)
		}
	}
	for i, e := range rep.EqualToOriginal {
		if i < 5 {
			t.Errorf("surrogate equals an original: %+v", e)
		}
	}
	for _, row := range rep.NamePatterns {
		if row.Original != row.Surrogate {
			t.Errorf("name pattern %q: %d original, %d surrogate", row.Pattern, row.Original, row.Surrogate)
		}
	}
	t.Logf("%d docs, %d spans, %d replaced, %d dates checked, %d kept values, %d unannotated finds, %d for review, %d name patterns",
		rep.Documents, rep.Spans, rep.Replaced, rep.DatesChecked, len(rep.Kept), len(rep.Unannotated), rep.Review, len(rep.NamePatterns))
	return rep
}

func TestMEDDOCAN(t *testing.T) {
	shared.NotUnderRace(t, "single-threaded tests")
	docs := meddocan(t)
	pol := DefaultPolicy()
	res, err := New(pol, nil, 1).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Language != "es" {
		t.Errorf("language %q, want es", res.Language)
	}
	rep := assertClean(t, docs, res, pol)
	byID := map[string]pipeline.Document{}
	for _, d := range docs {
		byID[d.ID] = d
	}
	for i, l := range rep.Unannotated {
		if i < 10 {
			t.Logf("unannotated: %s %q at %d", l.Doc, l.Value, l.Start)
		}
		// Where a curator adds the missing span: the value, in the source.
		if got := pipeline.NewIndex(byID[l.Doc].Text).Slice(l.SourceStart, l.SourceEnd); got != l.Value {
			t.Errorf("unannotated %q in %s: the source holds %q at %d-%d", l.Value, l.Doc, got, l.SourceStart, l.SourceEnd)
		}
	}
	// MEDDOCAN's gold misses some values it annotates elsewhere: each is
	// replaced by its value's surrogate, and the source holds at the
	// offsets listed a value the corpus annotates under the type (a name
	// also by its words, a place also in another patient's notes).
	if len(rep.Propagated) == 0 {
		t.Error("no unannotated occurrence replaced")
	}
	for _, p := range rep.Propagated {
		src, sur := byID[p.Doc], res.Docs[slices.IndexFunc(res.Docs, func(d pipeline.Document) bool { return d.ID == p.Doc })]
		was := fold(pipeline.NewIndex(src.Text).Slice(p.SourceStart, p.SourceEnd))
		words := " " + strings.Join(tokens(was), " ") + " "
		annotated := func(s pipeline.Span) bool {
			return s.Type == p.Type && strings.Contains(" "+strings.Join(tokens(s.Text), " ")+" ", words)
		}
		if !slices.ContainsFunc(docs, func(d pipeline.Document) bool { return slices.ContainsFunc(d.Spans, annotated) }) {
			t.Errorf("propagated %+v: the source holds no value of type %s there", p, p.Type)
		}
		if fold(pipeline.NewIndex(sur.Text).Slice(p.Start, p.End)) == was {
			t.Errorf("propagated %+v: the original is still there", p)
		}
	}
	for i, it := range res.Review {
		if i < 10 {
			t.Logf("review: %+v", it)
		}
	}
	for i := 0; i < 3; i++ {
		t.Logf("%s:\n%.600s", res.Docs[i].ID, res.Docs[i].Text)
	}

	again, err := New(pol, nil, 1).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, again) {
		t.Error("two runs with one seed differ")
	}
	other, err := New(pol, nil, 2).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range res.Docs {
		if res.Docs[i].Text == other.Docs[i].Text {
			same++
		}
	}
	if same > len(docs)/100 {
		t.Errorf("%d of %d documents identical under another seed", same, len(docs))
	}
}

// BenchmarkMEDDOCAN measures the pipeline alone (no database) on MEDDOCAN
// train; docs/s is the figure the README quotes.
func BenchmarkMEDDOCAN(b *testing.B) {
	docs := meddocan(b)
	pol := DefaultPolicy()
	r := New(pol, nil, 1)
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Run(docs, Store{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(docs)*b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkCheck measures the check over MEDDOCAN train.
func BenchmarkCheck(b *testing.B) {
	docs := meddocan(b)
	pol := DefaultPolicy()
	res, err := New(pol, nil, 1).Run(docs, Store{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		Check(docs, res, pol)
	}
	b.ReportMetric(float64(len(docs)*b.N)/b.Elapsed().Seconds(), "docs/s")
}
