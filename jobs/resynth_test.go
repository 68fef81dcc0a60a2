package jobs_test

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/dateshift"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/release"
	"deidcorpus/pipeline/resources"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestResynthesizeNewNotes resynthesizes a corpus, then the notes that arrive
// later for the same patients: the second job rewrites only the new notes and
// reuses the patients' mappings and date shifts.
func TestResynthesizeNewNotes(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	var first, later []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 40, Seed: 2, NotesMin: 3, NotesMax: 4}, func(p synth.Patient) error {
		first = append(first, p.Docs[:len(p.Docs)-1]...)
		later = append(later, p.Docs[len(p.Docs)-1])
		return nil
	}))
	opt := store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}
	_, err := st.ImportDocuments(ctx, opt, first)
	require.NoError(t, err)
	m := newManager(t, st, nil, jobs.Options{})
	params := jobs.ResynthesizeParams{Corpus: "notes", Out: "notes-r", Seed: 3}
	run := func() *jobsResult {
		j, err := m.Enqueue(ctx, params, "", nil)
		require.NoError(t, err)
		done := wait(t, m, j.ID)[0]
		require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
		return &jobsResult{done.Result}
	}
	r1 := run()
	assert.Equal(t, float64(len(first)), r1.Result["documents"])

	// The seed in the provenance does not redraw the date shifts: they come
	// from the seed keyed by the database's lookup key.
	byPatient := map[string]int{}
	stored, err := st.Client.DateShift.Query().All(ctx)
	require.NoError(t, err)
	for _, s := range stored {
		byPatient[s.Patient] = s.Days
	}
	redrawn, err := surrogate.New(nil, resources.Default(), params.Seed).Run(first, surrogate.Store{})
	require.NoError(t, err)
	same := 0
	for _, s := range redrawn.Shifts {
		if byPatient[s.Patient] == s.Days {
			same++
		}
	}
	assert.Less(t, same, 3, "of %d patients, %d shifts were redrawn from the published seed", len(byPatient), same)
	shifts1, err := st.Client.DateShift.Query().Count(ctx)
	require.NoError(t, err)

	_, err = st.ImportDocuments(ctx, opt, later)
	require.NoError(t, err)
	r2 := run()
	// The new notes are written, and the earlier notes of each patient whose
	// new note collided with a stored surrogate or shift, redrawn.
	redone := r2.Result["redonePatients"].(float64)
	docs2 := r2.Result["documents"].(float64)
	assert.GreaterOrEqual(t, docs2, float64(len(later)))
	assert.LessOrEqual(t, docs2, float64(len(later))+4*redone, "only the new notes and the redone patients' are rewritten")
	assert.Less(t, redone, float64(len(later))/4, "most patients keep their stored surrogates")
	check := r2.Result["check"].(map[string]any)
	assert.Equal(t, true, check["ok"], "%v", check)
	assert.EqualValues(t, 0, check["identifiers"], "the source ids were searched and not found: %v", check)

	shifts2, err := st.Client.DateShift.Query().Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, shifts1, shifts2, "one date shift a patient: reused, or replaced for a redone patient")
	state, err := st.SurrogateState(ctx, mustCorpusID(t, st, "notes"))
	require.NoError(t, err)
	seen := map[[3]string]string{}
	for _, mp := range state.Mappings {
		k := [3]string{mp.Scope, mp.Type, mp.Original}
		if prev, ok := seen[k]; ok && prev != mp.Surrogate {
			t.Errorf("%v mapped to both %q and %q", k, prev, mp.Surrogate)
		}
		seen[k] = mp.Surrogate
	}
	out, err := st.CorpusByName(ctx, "notes-r")
	require.NoError(t, err)
	ids, err := st.DocumentIDs(ctx, out.ID)
	require.NoError(t, err)
	assert.Len(t, ids, len(first)+len(later))
}

type jobsResult struct{ Result map[string]any }

func mustCorpusID(t *testing.T, st *store.Store, name string) int {
	t.Helper()
	c, err := st.CorpusByName(context.Background(), name)
	require.NoError(t, err)
	return c.ID
}

// TestShiftsDifferAcrossCorpora: a patient id in two corpora resynthesized
// with the same seed gets two unrelated date shifts, so an original date
// known in one corpus gives nothing away in the other.
func TestShiftsDifferAcrossCorpora(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 20, Seed: 2}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	m := newManager(t, st, nil, jobs.Options{})
	shifts := map[string]map[string]int{}
	for _, name := range []string{"a", "b"} {
		_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: name, TagSet: "i2b2-2014"}, docs)
		require.NoError(t, err)
		j, err := m.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: name, Out: name + "-r", Seed: 1}, "", nil)
		require.NoError(t, err)
		done := wait(t, m, j.ID)[0]
		require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
		rows, err := st.Client.DateShift.Query().Where(dateshift.CorpusID(mustCorpusID(t, st, name))).All(ctx)
		require.NoError(t, err)
		shifts[name] = map[string]int{}
		for _, r := range rows {
			shifts[name][r.Patient] = r.Days
		}
	}
	require.Len(t, shifts["a"], 20)
	same := 0
	for p, d := range shifts["a"] {
		if shifts["b"][p] == d {
			same++
		}
	}
	assert.Less(t, same, 3, "%d of 20 patients got the same shift in both corpora", same)
}

// TestSeedOfReusedState: mappings and date shifts belong to the source
// corpus, so a second surrogate corpus of it with another seed takes over
// the first run's choices instead of drawing its own. Its output is the
// first's, and its provenance says so: what was reused, from which job and
// that job's seed. A later run adding notes to it is recorded in its
// provenance's runs, with its own seed.
func TestSeedOfReusedState(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	var first, later []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 8, Seed: 2, NotesMin: 2, NotesMax: 3}, func(p synth.Patient) error {
		first = append(first, p.Docs[:len(p.Docs)-1]...)
		later = append(later, p.Docs[len(p.Docs)-1])
		return nil
	}))
	opt := store.ImportOptions{Corpus: "demo", TagSet: "i2b2-2014"}
	_, err := st.ImportDocuments(ctx, opt, first)
	require.NoError(t, err)
	m := newManager(t, st, nil, jobs.Options{})
	run := func(out string, seed uint64) *ent.Job {
		j, err := m.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "demo", Out: out, Seed: seed}, "", nil)
		require.NoError(t, err)
		done := wait(t, m, j.ID)[0]
		require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
		return done
	}
	texts := func(name string) map[string]string {
		c, err := st.CorpusByName(ctx, name)
		require.NoError(t, err)
		docs, err := st.LoadDocuments(ctx, c, "gold")
		require.NoError(t, err)
		out := map[string]string{}
		for _, d := range docs {
			out[d.ID] = d.Text
		}
		return out
	}
	j1 := run("demo-r", 1)
	assert.Empty(t, j1.Result["reused"], "the first run draws everything from its seed")
	mappings := j1.Result["newMappings"].(float64)
	require.Positive(t, mappings)

	j2 := run("demo-r2", 7)
	assert.Equal(t, texts("demo-r"), texts("demo-r2"), "seed 7 drew nothing: every choice was seed 1's")
	assert.Equal(t, float64(0), j2.Result["newMappings"])
	reused := j2.Result["reused"].([]any)
	require.Len(t, reused, 1)
	from := reused[0].(map[string]any)
	assert.Equal(t, float64(j1.ID), from["job"])
	assert.Equal(t, float64(1), from["seed"])
	assert.Equal(t, "demo-r", from["corpus"])
	assert.Equal(t, float64(8), from["shifts"], "every patient's date shift")
	assert.Positive(t, from["mappings"])
	assert.LessOrEqual(t, from["mappings"], mappings)
	c2, err := st.CorpusByName(ctx, "demo-r2")
	require.NoError(t, err)
	assert.Equal(t, reused, jsonValue(t, c2.Provenance["reused"]))
	assert.Equal(t, float64(7), jsonValue(t, c2.Provenance["seed"]))

	_, err = st.ImportDocuments(ctx, opt, later)
	require.NoError(t, err)
	j3 := run("demo-r2", 9)
	c2, err = st.CorpusByName(ctx, "demo-r2")
	require.NoError(t, err)
	runs := c2.Provenance["runs"].([]any)
	require.Len(t, runs, 1)
	added := runs[0].(map[string]any)
	assert.Equal(t, float64(j3.ID), added["job"])
	assert.Equal(t, float64(9), added["seed"])
	// The new notes, and the earlier notes of any patient whose new notes
	// collided with a stored surrogate or shift (rewritten, so that the check passes).
	assert.GreaterOrEqual(t, added["documents"], float64(len(later)))
	assert.Equal(t, true, j3.Result["check"].(map[string]any)["ok"], "the incremental run passes its check")
	assert.Equal(t, float64(j1.ID), added["reused"].([]any)[0].(map[string]any)["job"], "the patients' shifts are still seed 1's")
}

// jsonValue is v as it reads back from the database's JSON.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// TestResynthesisResumes ends a resynthesis after two of its batches are
// saved, and retries it: the target stays quarantined in between, and the
// retry skips the saved patients and ends with the corpus, mappings, shifts
// and check of an uninterrupted run (the same key and source in another
// database).
func TestResynthesisResumes(t *testing.T) {
	ctx := context.Background()
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 60, Seed: 4}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	type output struct {
		docs     []pipeline.Document
		mappings []surrogate.Mapping
		shifts   []surrogate.PatientShift
		result   map[string]any
		report   string // the full check report, review items among it
	}
	resynthesize := func(t *testing.T, b storetest.Backend, interrupt bool, parts int) output {
		params := jobs.ResynthesizeParams{Corpus: "notes", Out: "notes-r", Seed: 5, Parts: parts}
		st := storetest.Open(t, b) // the test's key: the same secret seed in every database of the subtest
		_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}, docs)
		require.NoError(t, err)
		m := newManager(t, st, nil, jobs.Options{})
		attempt := 1
		defer jobs.SetResynthesisBatches(40, func(saved int) error {
			if interrupt && attempt == 1 && saved == 2 {
				return apperr.New(apperr.Invalid, "interrupted")
			}
			return nil
		})()
		j, err := m.Enqueue(ctx, params, "", nil)
		require.NoError(t, err)
		done := wait(t, m, j.ID)[0]
		if interrupt {
			require.Equal(t, job.StatusFailed, done.Status, done.Error)
			out, err := st.CorpusByName(ctx, params.Out)
			require.NoError(t, err)
			assert.Equal(t, corpus.CheckStatusFailed, out.CheckStatus, "a corpus being written is quarantined")
			require.NotNil(t, store.InProgress(out))
			ids, err := st.DocumentIDs(ctx, out.ID)
			require.NoError(t, err)
			require.NotEmpty(t, ids)
			require.Less(t, len(ids), len(docs))
			attempt = 2
			_, err = m.Retry(ctx, j.ID)
			require.NoError(t, err)
			done = wait(t, m, j.ID)[0]
		}
		require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
		kids, err := st.ChildJobs(ctx, j.ID)
		require.NoError(t, err)
		if parts > 0 {
			// As many parts as asked, or fewer where whole patients do not divide.
			require.GreaterOrEqual(t, len(kids), 2, "the job's parts")
			require.LessOrEqual(t, len(kids), parts, "the job's parts")
			for _, k := range kids { // their sealed working files are gone
				_, err := st.Artifact(ctx, int(k.Result["state"].(float64)))
				assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "part %d's check state", k.ID)
			}
		} else {
			require.Empty(t, kids)
		}
		src, err := st.CorpusByName(ctx, "notes")
		require.NoError(t, err)
		out, err := st.CorpusByName(ctx, params.Out)
		require.NoError(t, err)
		assert.Equal(t, corpus.CheckStatusPassed, out.CheckStatus)
		assert.Nil(t, store.InProgress(out))
		written, err := st.LoadDocuments(ctx, out, "gold")
		require.NoError(t, err)
		state, err := st.SurrogateState(ctx, src.ID)
		require.NoError(t, err)
		sortMappings(state.Mappings)
		report, err := st.Artifact(ctx, int(done.Result["checkReport"].(float64)))
		require.NoError(t, err)
		return output{written, state.Mappings, state.Shifts, done.Result, string(report.Data)}
	}
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			whole := resynthesize(t, b, false, 0)
			// Resumed whole, split into 3 parts that the workers share, and
			// split with a part failing after two batches and retried.
			for _, run := range []struct {
				interrupt bool
				parts     int
			}{{true, 0}, {false, 3}, {true, 3}} {
				got := resynthesize(t, b, run.interrupt, run.parts)
				require.Len(t, got.docs, len(docs))
				assert.Equal(t, whole.docs, got.docs, "%+v", run)
				assert.Equal(t, whole.mappings, got.mappings, "%+v", run)
				assert.Equal(t, whole.shifts, got.shifts, "%+v", run)
				assert.Equal(t, float64(len(docs)), got.result["documents"], "%+v: every document of the job is reported", run)
				if run.interrupt {
					assert.Less(t, got.result["written"], got.result["documents"], "%+v: the retry skips what was saved", run)
				}
				assert.Equal(t, whole.result["check"], got.result["check"], "%+v", run)
				assert.Equal(t, whole.result["newMappings"], got.result["newMappings"], "%+v", run)
				assert.Equal(t, whole.report, got.report, "%+v: the full check report", run)
			}
		})
	}
}

// A part that finds the source changed since its job planned (an import
// meanwhile) would draw other surrogates than the parts before it: it fails
// for good, and so does the job, saying why.
func TestResynthesisPartsRefuseAChangedSource(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 30)
	m := newManager(t, st, nil, jobs.Options{})
	var once sync.Once
	defer jobs.SetResynthesisBatches(20, func(int) error {
		var err error
		once.Do(func() {
			_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes"},
				[]pipeline.Document{{ID: "999-01", Patient: "999", RecordOrder: 1, Text: "A new note."}})
		})
		return err
	})()
	j, err := m.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "notes", Out: "notes-r", Seed: 5, Parts: 2}, "", nil)
	require.NoError(t, err)
	done := wait(t, m, j.ID)[0]
	require.Equal(t, job.StatusFailed, done.Status)
	assert.Contains(t, done.Error, `corpus "notes" changed since the job planned its parts`)
	assert.Equal(t, 1, done.Attempts, "not tried again: it would meet the same change")
}

// A resynthesis whose source is gone by the time a worker takes it fails
// as not found, in one attempt, whole or in parts.
func TestResynthesisOfADeletedSource(t *testing.T) {
	ctx := context.Background()
	for _, parts := range []int{0, 2} {
		st := storetest.Open(t, storetest.SQLite)
		_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"},
			[]pipeline.Document{{ID: "1-01", Patient: "1", RecordOrder: 1, Text: "Seen."}})
		require.NoError(t, err)
		queue, err := jobs.New(ctx, st, jobs.Handlers(), jobs.Options{}) // queues, works nothing
		require.NoError(t, err)
		j, err := queue.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "notes", Out: "notes-r", Parts: parts}, "", nil)
		require.NoError(t, err)
		require.NoError(t, st.DeleteCorpus(ctx, "notes"))
		done := wait(t, newManager(t, st, nil, jobs.Options{}), j.ID)[0]
		require.Equal(t, job.StatusFailed, done.Status, "parts %d", parts)
		assert.Contains(t, done.Error, `"notes"`, "parts %d", parts)
		assert.NotContains(t, done.Error, "panicked", "parts %d", parts)
		assert.Equal(t, 1, done.Attempts, "parts %d: not found is not tried again", parts)
	}
}

func sortMappings(ms []surrogate.Mapping) {
	slices.SortFunc(ms, func(a, b surrogate.Mapping) int {
		return cmp.Or(cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Original, b.Original))
	})
}

// TestResynthesisRewritesChangedNotes: a curator adds to the source a name
// the gold had missed, which the surrogate corpus holds as written; the next
// resynthesis into the same corpus rewrites that note (its outline changed),
// and the one after rewrites nothing.
func TestResynthesisRewritesChangedNotes(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 6, Seed: 4}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	// The first note's first patient name, unannotated.
	d := &docs[0]
	k := slices.IndexFunc(d.Spans, func(s pipeline.Span) bool { return s.Type == "PATIENT" })
	require.GreaterOrEqual(t, k, 0)
	missed := d.Spans[k]
	fixed := *d
	fixed.Spans = slices.Clone(d.Spans)
	d.Spans = slices.Delete(slices.Clone(d.Spans), k, k+1)
	opt := store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}
	_, err := st.ImportDocuments(ctx, opt, docs)
	require.NoError(t, err)

	m := newManager(t, st, nil, jobs.Options{})
	// Without propagation the missed name stays, an unannotated find that
	// quarantines the corpus until a curator resolves it.
	run := func(status job.Status) map[string]any {
		j, err := m.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "notes", Out: "notes-r", Seed: 3,
			Policy: map[string]any{"propagate": false}}, "", nil)
		require.NoError(t, err)
		done := wait(t, m, j.ID)[0]
		require.Equal(t, status, done.Status, done.Error)
		return done.Result
	}
	// The surrogate corpus names the note by a pseudonym of its id.
	surrogateID := func() string {
		src, err := st.CorpusByName(ctx, "notes")
		require.NoError(t, err)
		out, err := st.CorpusByName(ctx, "notes-r")
		require.NoError(t, err)
		names, err := st.SurrogateNames(out, src.ID)
		require.NoError(t, err)
		require.True(t, names.Pseudonymous())
		return names.Doc(d.ID)
	}
	surrogateText := func() string {
		out, err := st.CorpusByName(ctx, "notes-r")
		require.NoError(t, err)
		ds, err := st.LoadDocuments(ctx, out, "gold")
		require.NoError(t, err)
		for _, s := range ds {
			if s.ID == surrogateID() {
				return s.Text
			}
		}
		t.Fatalf("no surrogate of %s", d.ID)
		return ""
	}
	assert.EqualValues(t, len(docs), run(job.StatusCheckFailed)["documents"])
	require.Contains(t, surrogateText(), missed.Text, "the missed name is copied")
	_, err = st.ResolveCheckFindings(ctx, "notes-r", "read: the name is the patient's nickname", "cara")
	require.NoError(t, err)
	unannotated := func() map[string]int {
		out, err := st.CorpusByName(ctx, "notes-r")
		require.NoError(t, err)
		perNote, _ := release.Unannotated(out.Provenance)
		return perNote
	}
	assert.Positive(t, unannotated()[surrogateID()], "the copy is counted against its note")

	// Such a corpus is shared only with a curator's reason, which the
	// datasheet states.
	share := func(version, reason string) (*ent.Release, error) {
		return st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "notes-r", Name: "pub", Version: version, Share: true,
			AcceptUnannotated: reason, By: "cara"})
	}
	_, err = share("1.0.0", "")
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.ErrorContains(t, err, "copied where the source's gold has no span")
	assert.ErrorContains(t, err, "read them with: deidcorpus resynth report notes-r)")
	_, err = share("1.0.0", "   ")
	assert.ErrorContains(t, err, "is blank")
	r, err := share("1.0.0", "read: the name is the patient's nickname, not identifying")
	require.NoError(t, err)
	assert.Regexp(t, `\d+ original values? in 1 note, copied where the source's gold has no span, were read by a curator and accepted for sharing`, r.Datasheet)
	assert.NotContains(t, r.Datasheet, "nickname", "the reason may quote values: it stays out of the archive")
	assert.Equal(t, "read: the name is the patient's nickname, not identifying", r.Provenance["unannotatedAccepted"].(map[string]any)["reason"])
	// The count per note names notes by the corpus's ids: a release, whose
	// ids may be pseudonymous, states only the total.
	assert.NotContains(t, r.Datasheet, "unannotatedDocuments")
	assert.NotContains(t, r.Datasheet, `"`+d.ID+`"`)
	assert.NotContains(t, r.Provenance["corpusProvenance"], "unannotatedDocuments")

	opt.Replace = true
	_, err = st.ImportDocuments(ctx, opt, []pipeline.Document{fixed})
	require.NoError(t, err)
	res := run(job.StatusSucceeded)
	assert.GreaterOrEqual(t, res["documents"], float64(1), "the changed note is rewritten")
	assert.Less(t, res["documents"], float64(len(docs)), "not the whole corpus")
	assert.NotContains(t, surrogateText(), missed.Text)
	assert.Empty(t, unannotated(), "the rewritten note's count is its own")
	_, err = share("1.0.1", "")
	assert.NoError(t, err, "nothing left to accept")
	assert.EqualValues(t, 0, run(job.StatusSucceeded)["documents"], "nothing changed since")

	// A corpus resynthesized before finds were counted per note is gated by
	// its first run's count.
	out, err := st.CorpusByName(ctx, "notes-r")
	require.NoError(t, err)
	prov := maps.Clone(out.Provenance)
	delete(prov, release.UnannotatedKey)
	prov["check"] = map[string]any{"ok": true, "leaks": 0.0, "unannotated": 2.0}
	require.NoError(t, st.Client.Corpus.UpdateOne(out).SetProvenance(prov).Exec(ctx))
	_, err = share("1.0.2", "")
	assert.ErrorContains(t, err, "holds 2 original values in its notes (counted as a whole")
	// Two runs wrote the corpus: each one's report lists the finds of its notes.
	assert.Regexp(t, `read them with: the reports of the runs that wrote them, deidcorpus resynth report notes-r --job N for N in \[\d+ \d+\]\)`, err)
	_, err = share("1.0.2", "read them")
	assert.NoError(t, err)

	// Deleting the source takes the mappings kept for it (its originals,
	// encrypted) and its date shifts; the surrogate corpus stays.
	mappings, err := st.Client.SurrogateMapping.Query().Count(ctx)
	require.NoError(t, err)
	require.Positive(t, mappings)
	require.NoError(t, st.DeleteCorpus(ctx, "notes"))
	mappings, err = st.Client.SurrogateMapping.Query().Count(ctx)
	require.NoError(t, err)
	shifts, err := st.Client.DateShift.Query().Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, mappings+shifts)
	_, err = st.CorpusByName(ctx, "notes-r")
	assert.NoError(t, err)
}

// TestResynthesisPartsShareNewNotes: a resynthesis split into parts that
// adds the new notes of two patients to a corpus resynthesized before cuts
// its parts by the notes to write, so that each part writes one, and writes
// what a whole run writes.
func TestResynthesisPartsShareNewNotes(t *testing.T) {
	ctx := context.Background()
	var first, later []pipeline.Document
	patients := 0
	require.NoError(t, synth.Generate(synth.Options{Patients: 30, Seed: 6, NotesMin: 2, NotesMax: 3}, func(p synth.Patient) error {
		patients++
		if patients <= 28 {
			first = append(first, p.Docs...)
		} else {
			first = append(first, p.Docs[:len(p.Docs)-1]...)
			later = append(later, p.Docs[len(p.Docs)-1])
		}
		return nil
	}))
	resynthesize := func(parts int) ([]pipeline.Document, []*ent.Job) {
		st := storetest.Open(t, storetest.SQLite)
		m := newManager(t, st, nil, jobs.Options{})
		opt := store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}
		var j *ent.Job
		for _, notes := range [][]pipeline.Document{first, later} {
			_, err := st.ImportDocuments(ctx, opt, notes)
			require.NoError(t, err)
			j, err = m.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "notes", Out: "notes-r", Seed: 3, Parts: parts}, "", nil)
			require.NoError(t, err)
			done := wait(t, m, j.ID)[0]
			require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
		}
		kids, err := st.ChildJobs(ctx, j.ID)
		require.NoError(t, err)
		out, err := st.CorpusByName(ctx, "notes-r")
		require.NoError(t, err)
		written, err := st.LoadDocuments(ctx, out, "gold")
		require.NoError(t, err)
		return written, kids
	}
	whole, _ := resynthesize(0)
	split, kids := resynthesize(2)
	require.Len(t, kids, 2, "the second run's parts")
	for _, k := range kids {
		assert.NotZero(t, k.Result["documents"], "part %d wrote nothing: the parts were not cut by the notes to write", k.ID)
	}
	assert.Equal(t, whole, split)
}

// A resynthesis queued by an older version, whose policy names a mapping
// file and a directory on the server, fails in one attempt saying to
// resubmit the text: the file is not read, its first line not quoted.
func TestResynthesisQueuedWithAPolicyPath(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"},
		[]pipeline.Document{{ID: "1-01", Patient: "1", RecordOrder: 1, Text: "Seen."}})
	require.NoError(t, err)
	secret := filepath.Join(t.TempDir(), "admin.tokens")
	require.NoError(t, os.WriteFile(secret, []byte("s3cr3t-token a b\n"), 0o000))
	queue, err := jobs.New(ctx, st, jobs.Handlers(), jobs.Options{}) // queues, works nothing
	require.NoError(t, err)
	for field, want := range map[string]string{
		"mapping":   "policy: mapping is a server path",
		"resources": "policy: resources is a server path",
	} {
		j, err := queue.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "notes", Out: "notes-" + field}, "", nil)
		require.NoError(t, err)
		// As an older version stored it, its policy unchecked by this one.
		params := maps.Clone(j.Params)
		params["policy"] = map[string]any{field: secret}
		data, err := json.Marshal(params)
		require.NoError(t, err)
		_, err = st.DB.ExecContext(ctx, `UPDATE jobs SET params = ? WHERE id = ?`, string(data), j.ID)
		require.NoError(t, err)
		done := wait(t, newManager(t, st, nil, jobs.Options{}), j.ID)[0]
		require.Equal(t, job.StatusFailed, done.Status, field)
		assert.Contains(t, done.Error, want)
		assert.Contains(t, done.Error, "resubmit with")
		assert.NotContains(t, done.Error, "s3cr3t")
		assert.NotContains(t, done.Error, secret)
		assert.Equal(t, 1, done.Attempts, "%s: not tried again", field)
	}
}
