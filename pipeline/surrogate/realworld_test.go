package surrogate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/resources"
	"deidcorpus/pipeline/synth"
)

// The tests of this file hold resynthesis to issue 14's bar on corpora
// nobody here wrote: MEDDOCAN train and dev, with their own labels and in
// i2b2 form, and a synthetic English corpus; each must pass its check for
// 20 keys, and an independent count over the output finds real words.

func readCorpus(tb testing.TB, rel string) []pipeline.Document {
	tb.Helper()
	files, err := formats.ReadPaths(shared.Path(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	docs, err := formats.ReadI2B2(files, formats.ReadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return docs
}

type testCorpus struct {
	name string
	docs []pipeline.Document
}

func realCorpora(t *testing.T) []testCorpus {
	var english []pipeline.Document
	if err := synth.Generate(synth.Options{Patients: 1000, Seed: 3}, func(p synth.Patient) error {
		english = append(english, p.Docs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return []testCorpus{
		{"meddocan-train-own", readCorpus(t, "meddocan/corpus/train/xml")},
		{"meddocan-dev-own", readCorpus(t, "meddocan/corpus/dev/xml")},
		{"meddocan-i2b2-train", readCorpus(t, "meddocan-i2b2/train")},
		{"meddocan-i2b2-dev", readCorpus(t, "meddocan-i2b2/dev")},
		{"synth-en", english},
	}
}

func TestRealCorporaPassTheirCheck(t *testing.T) {
	keys := 20
	if shared.RaceEnabled {
		keys = 1
	}
	words := knownWords(t)
	for _, c := range realCorpora(t) {
		t.Run(c.name, func(t *testing.T) {
			if shared.RaceEnabled && !strings.HasSuffix(c.name, "-dev") && !strings.HasSuffix(c.name, "-dev-own") {
				t.Skip("under the race detector only the dev corpora run (the check's concurrency is the same); .ci/run runs every corpus without it")
			}
			pol := DefaultPolicy()
			for key := uint64(1); key <= uint64(keys); key++ {
				res, err := New(pol, nil, key*7919).Run(c.docs, Store{})
				if err != nil {
					t.Fatal(err)
				}
				rep := assertClean(t, c.docs, res, pol)
				if !rep.OK() {
					t.Fatalf("key %d: the check failed", key)
				}
				if key == 1 {
					assertRealWords(t, c.docs, res, words)
					propagated := map[string]bool{} // a replaced miss is text outside the spans that changed
					for _, p := range res.Propagated {
						propagated[p.Doc] = true
					}
					for i, d := range res.Docs { // what tells an unchanged source note (see Outline)
						if OutlineOf(d) != OutlineOf(c.docs[i]) && !propagated[d.ID] {
							t.Errorf("document %s: its surrogate's outline differs from its source's", d.ID)
						}
					}
				}
			}
		})
	}
}

// knownWords is every word of the lists in ../shared/data, folded: Census
// and SSA names, US places, CMS hospitals, faker's en and es definitions.
func knownWords(t *testing.T) map[string]bool {
	known := map[string]bool{}
	addText := func(s string) {
		for _, w := range wordsOf(s) {
			known[w] = true
		}
	}
	readAll := func(rel string) string {
		b, err := os.ReadFile(shared.Path(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, f := range []string{"census1990-names/dist.female.first", "census1990-names/dist.male.first", "census1990-names/dist.all.last",
		"ssa-babynames/ssa_national_firstnames_by_sex.csv", "us-zipcodes/zipcodes_us.csv", "cms-hospitals/hospitals_min.csv"} {
		addText(readAll(f))
	}
	for _, f := range []string{"faker-en/faker_en_us_names_locations.json", "faker-es/faker_es.json"} {
		var v any
		if err := json.Unmarshal([]byte(readAll(f)), &v); err != nil {
			t.Fatal(err)
		}
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case string:
				addText(x)
			}
		}
		walk(v)
	}
	// INE's Spanish surnames, which the Spanish pack draws from, are kept
	// beside the generator of the lists (see resources/data/NOTICE).
	for _, n := range ineSurnames(t) {
		addText(n)
	}
	// Month and weekday names are words of both languages whatever a list
	// holds; so are the professions of the embedded packs, which no list of
	// ../shared/data has (written by hand, see resources/data/NOTICE).
	for _, names := range [][]string{monthNames["en"], monthNames["es"], weekdayNames["en"], weekdayNames["es"],
		resources.Default().Professions("en"), resources.Default().Professions("es")} {
		for _, n := range names {
			addText(n)
		}
	}
	return known
}

// wordsOf splits text into folded words: runs of letters, leaving out codes
// (runs of letters and digits with a digit, "QB748372") and upper-case runs
// of up to three letters (initials, abbreviations).
func wordsOf(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if strings.ContainsFunc(w, unicode.IsDigit) || len([]rune(w)) <= 3 && strings.ToUpper(w) == w {
			continue
		}
		out = append(out, fold(w))
	}
	return out
}

// assertRealWords counts, independently of how the surrogates were made,
// the words of replaced spans known neither to a list, nor to the original
// corpus's text outside its PHI spans, nor to the replaced value itself (a
// street's or unit's word the surrogate keeps as written: under 3% allowed); the share of
// Spanish names among the words of surrogate person names in Spanish
// corpora (95% at least: a Spanish note does not name its people from US
// lists); and words of surrogate dates that are no month
// or weekday name and no word of an original date (none allowed).
func assertRealWords(t *testing.T, orig []pipeline.Document, res *Result, lists map[string]bool) {
	t.Helper()
	corpus, dateWordsSeen := map[string]bool{}, map[string]bool{}
	for _, d := range orig {
		ix := pipeline.NewIndex(d.Text)
		prev := 0
		for _, s := range sortedSpans(d.Spans) {
			for _, w := range wordsOf(ix.Slice(prev, s.Start)) {
				corpus[w] = true
			}
			prev = max(prev, s.End)
			if isDateType(s) {
				for _, w := range wordsOf(s.Text) {
					dateWordsSeen[w] = true
				}
			}
		}
		for _, w := range wordsOf(ix.Slice(prev, ix.Len())) {
			corpus[w] = true
		}
	}
	for _, names := range [][]string{monthNames["en"], monthNames["es"], weekdayNames["en"], weekdayNames["es"]} {
		for _, n := range names {
			f := []rune(fold(n))
			dateWordsSeen[string(f)] = true
			for _, k := range []int{3, 4} { // "sep", "sept"
				dateWordsSeen[string(f[:min(k, len(f))])] = true
			}
		}
	}
	spanish := map[string]bool{}
	var es struct {
		Person struct {
			FirstName map[string][]string `json:"first_name"`
			LastName  map[string][]string `json:"last_name"`
		} `json:"person"`
	}
	b, err := os.ReadFile(filepath.Join(shared.Path(t, "faker-es"), "faker_es.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &es); err != nil {
		t.Fatal(err)
	}
	for _, n := range ineSurnames(t) {
		spanish[fold(n)] = true
	}
	// The pack's first names: faker's and Spain's commonest by INE's tables.
	for _, n := range resources.ForLanguage("es").FirstNames(resources.Either) {
		spanish[fold(n.Text)] = true
	}
	for _, m := range []map[string][]string{es.Person.FirstName, es.Person.LastName} {
		for _, l := range m {
			for _, n := range l {
				spanish[fold(n)] = true
			}
		}
	}
	words, unknown, nameWords, spanishNames := 0, 0, 0, 0
	var examples, badDates []string
	for i, d := range res.Docs {
		for k, s := range d.Spans {
			o := orig[i].Spans[k]
			if s.Text == o.Text {
				continue
			}
			kept := map[string]bool{} // the original's own structure words (Avda., Izq.), kept as written
			for _, w := range wordsOf(o.Text) {
				kept[w] = true
			}
			for _, w := range wordsOf(s.Text) {
				words++
				if !lists[w] && !corpus[w] && !kept[w] && !(strings.Contains(s.Text, "@") && joinedWords(w, lists)) {
					unknown++
					if len(examples) < 10 {
						examples = append(examples, fmt.Sprintf("%q in %q (%s, from %q)", w, s.Text, s.Type, o.Text))
					}
				}
				if isNameType(s) {
					nameWords++
					if spanish[w] {
						spanishNames++
					}
				}
				if isDateType(s) && !dateWordsSeen[w] && len(badDates) < 10 {
					badDates = append(badDates, fmt.Sprintf("%q in %q (from %q)", w, s.Text, o.Text))
				}
			}
		}
	}
	share := float64(unknown) / float64(max(words, 1))
	t.Logf("%d words in replaced spans, %d unknown (%.2f%%); %d name words, %d Spanish", words, unknown, 100*share, nameWords, spanishNames)
	if share >= 0.03 {
		t.Errorf("%.2f%% of the words of replaced spans are unknown (want under 3%%), e.g. %v", 100*share, examples)
	}
	if res.Language == "es" && nameWords > 0 && float64(spanishNames) < 0.95*float64(nameWords) {
		t.Errorf("%d of %d surrogate name words are Spanish names, want 95%%", spanishNames, nameWords)
	}
	if len(badDates) > 0 {
		t.Errorf("surrogate dates hold words that are no month or weekday and no word of an original date: %v", badDates)
	}
}

func sortedSpans(spans []pipeline.Span) []pipeline.Span {
	out := slices.Clone(spans)
	slices.SortStableFunc(out, func(a, b pipeline.Span) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

func isDateType(s pipeline.Span) bool {
	return s.Type == "DATE" || s.Type == "FECHAS"
}

func isNameType(s pipeline.Span) bool {
	switch s.Type {
	case "PATIENT", "DOCTOR", "NOMBRE_SUJETO_ASISTENCIA", "NOMBRE_PERSONAL_SANITARIO":
		return true
	}
	return false
}

// TestIncrementalRunsStayConsistent resynthesizes each patient's earlier
// notes, then the last ones with the stored mappings and shifts, under 200
// seeds: every combined output must pass the check.
func TestIncrementalRunsStayConsistent(t *testing.T) {
	var seeds []uint64
	for seed := uint64(1); seed <= 200; seed++ {
		// Under the race detector, 5 seeds and the two of the 200 whose
		// second run redraws a stored corpus value (stalePatient's drop
		// path: without it they leak); .ci/run runs all 200 without it.
		if !shared.RaceEnabled || seed <= 5 || seed == 149 || seed == 172 {
			seeds = append(seeds, seed)
		}
	}
	pol := DefaultPolicy()
	failed := 0
	for _, seed := range seeds {
		var docs, early, late []pipeline.Document
		if err := synth.Generate(synth.Options{Patients: 40, Seed: seed}, func(p synth.Patient) error {
			docs = append(docs, p.Docs...)
			for i, d := range p.Docs {
				if i < len(p.Docs)-1 {
					early = append(early, d)
				} else {
					late = append(late, d)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		first, err := New(pol, nil, seed).Run(early, Store{})
		if err != nil {
			t.Fatal(err)
		}
		r := New(pol, nil, seed+1000)
		r.Context = early
		second, err := r.Run(late, Store{Mappings: first.Mappings, Shifts: first.Shifts})
		if err != nil {
			t.Fatal(err)
		}
		combined := mergeRuns(first, second)
		if rep := Check(docs, combined, pol); !rep.OK() {
			failed++
			if failed <= 3 {
				t.Errorf("seed %d: %d leaks (%+v), %d interval errors, %d equal to an original, %d inconsistent",
					seed, len(rep.Leaks), rep.Leaks, len(rep.IntervalErrors), len(rep.EqualToOriginal), len(rep.Inconsistent))
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d seeds fail their check after an incremental run", failed, len(seeds))
	}
}

// mergeRuns is the output a job keeps after a second, incremental run: the
// first run's documents, replaced by any the second rewrote, and the
// second's new ones.
func mergeRuns(first, second *Result) *Result {
	byID := map[string]int{}
	out := &Result{Language: first.Language}
	for _, d := range first.Docs {
		byID[d.ID] = len(out.Docs)
		out.Docs = append(out.Docs, d)
	}
	for _, d := range second.Docs {
		if i, ok := byID[d.ID]; ok {
			out.Docs[i] = d
		} else {
			out.Docs = append(out.Docs, d)
		}
	}
	shifts := map[string]PatientShift{}
	for _, s := range first.Shifts {
		shifts[s.Patient] = s
	}
	for _, s := range second.Shifts {
		shifts[s.Patient] = s
	}
	for _, s := range shifts {
		out.Shifts = append(out.Shifts, s)
	}
	redone := map[string]bool{}
	for _, p := range second.Redone {
		redone[PatientScope(p)] = true
	}
	dropped := map[string]bool{}
	for _, m := range second.Dropped {
		dropped[m.Type+"\x00"+fold(m.Original)] = true
	}
	for _, m := range first.Mappings {
		if !redone[m.Scope] && !(m.Scope == ScopeCorpus && dropped[m.Type+"\x00"+fold(m.Original)]) {
			out.Mappings = append(out.Mappings, m)
		}
	}
	out.Mappings = append(out.Mappings, second.Mappings...)
	return out
}

// ineSurnames reads the list of Spain's surnames the Spanish pack is
// generated from.
func ineSurnames(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "resources", "gen", "es_surnames.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		t.Fatal(err)
	}
	return names
}

// joinedWords reports whether w is known words written together, as an
// address's local part joins them ("tpastorn": an initial, "pastor", an
// initial): words of three letters or more, and up to two initials at
// either end.
func joinedWords(w string, known map[string]bool) bool {
	r := []rune(w)
	// ok[i]: r[i:] splits into known words and a final run of initials.
	ok := make([]bool, len(r)+1)
	for i := len(r); i >= 0; i-- {
		ok[i] = len(r)-i <= 2
		for j := i + 3; j <= len(r) && !ok[i]; j++ {
			ok[i] = ok[j] && known[string(r[i:j])]
		}
	}
	for i := 0; i <= 2 && i <= len(r); i++ {
		if ok[i] && len(r)-i > 2 {
			return true
		}
	}
	return false
}

func TestJoinedWords(t *testing.T) {
	known := map[string]bool{"pastor": true, "lopez": true, "martinez": true}
	for w, want := range map[string]bool{"tpastorn": true, "lopezmartinez": true, "pastor": true, "xyzpastor": false, "fdopicomkgkt": false, "ab": false} {
		if got := joinedWords(w, known); got != want {
			t.Errorf("%q: %v", w, got)
		}
	}
}
