package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent"
	"deidcorpus/internal/keys"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// tableBytes is everything a table holds, every text and blob column of
// every row as raw bytes: what a copy of the database gives away. Numbers and
// times (ids, created_at) are left out: they are not PHI, and a short numeric
// original could turn up in one by chance.
func tableBytes(t *testing.T, db *sql.DB, table string) []byte {
	t.Helper()
	rows, err := db.Query(`SELECT * FROM ` + table)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out bytes.Buffer
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		for _, v := range vals {
			switch v := v.(type) {
			case []byte:
				out.Write(v)
			case string:
				out.WriteString(v)
			}
			out.WriteByte(0)
		}
	}
	require.NoError(t, rows.Err())
	return out.Bytes()
}

// pgDump is pg_dump's output for the surrogate_mappings table, or nil (with a
// message) when pg_dump is missing.
func pgDump(t *testing.T, dsn, table string) []byte {
	t.Helper()
	if _, err := exec.LookPath("pg_dump"); err != nil {
		t.Log("pg_dump is not installed: the dump is not searched")
		return nil
	}
	out, err := exec.Command("pg_dump", "--data-only", "--table="+table, dsn).Output()
	require.NoError(t, err)
	require.Contains(t, string(out), "COPY public."+table)
	// Numbers and times are left out, as in tableBytes; bytea
	// columns come hex-encoded: decode them, so that the search sees the
	// bytes stored.
	var kept [][]byte
	for _, line := range bytes.Split(out, []byte("\n")) {
		var fields [][]byte
		for _, f := range bytes.Split(line, []byte("\t")) {
			if !numberOrTime.Match(f) {
				fields = append(fields, f)
			}
		}
		kept = append(kept, bytes.Join(fields, []byte("\t")))
	}
	out = bytes.Join(kept, []byte("\n"))
	return byteaHex.ReplaceAllFunc(out, func(m []byte) []byte {
		b, err := hex.DecodeString(string(bytes.TrimLeft(m, `\x`)))
		if err != nil {
			return m
		}
		return b
	})
}

var (
	byteaHex  = regexp.MustCompile(`\\\\?x([0-9a-f]{2})+`)
	keyedHash = regexp.MustCompile(`[0-9a-f]{64}`)
	// A COPY field that is an integer or a timestamp.
	numberOrTime = regexp.MustCompile(`^(-?\d+|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?([+-]\d\d(:\d\d)?)?)$`)
)

// resynthesized imports a synthetic corpus "notes" of some patients and
// resynthesizes its documents as read back (seed 7), without saving anything
// of the run.
func resynthesized(t *testing.T, st *store.Store, patients int, seed uint64) (*ent.Corpus, []pipeline.Document, *surrogate.Result) {
	t.Helper()
	ctx := context.Background()
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: patients, Seed: seed}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}, docs)
	require.NoError(t, err)
	src, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	docs, err = st.LoadDocuments(ctx, src, "gold")
	require.NoError(t, err)
	res, err := surrogate.New(nil, resources.Default(), 7).Run(docs, surrogate.Store{})
	require.NoError(t, err)
	return src, docs, res
}

// leaked lists the originals (of 4 characters or more) found in data. The
// keyed hashes (64 hex digits) are taken out first: a short number could
// turn up in one by chance.
func leaked(data []byte, originals []string) []int {
	data = keyedHash.ReplaceAll(data, []byte{0})
	var out []int // indexes, not values: the test output must not print PHI either
	for i, o := range originals {
		if bytes.Contains(data, []byte(o)) {
			out = append(out, i)
		}
	}
	return out
}

// TestMappingsEncryptedAtRest resynthesizes a synthetic corpus and checks
// that the mapping table, read raw and dumped by pg_dump, holds none of the
// original values; that they read back; that a lookup by value finds them;
// that another key cannot read them; and that after a rotation they are all
// under the new key and still read back.
func TestMappingsEncryptedAtRest(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, b)
			cfg := keys.Config{} // SQLite: the default key file next to the database
			if b == storetest.Postgres {
				cfg.File = filepath.Join(t.TempDir(), "pg.key")
				_, err := keys.Create(cfg.File)
				require.NoError(t, err)
			}
			st, err := store.Open(ctx, dsn, store.WithKeys(cfg))
			require.NoError(t, err)
			defer st.Close()

			src, docs, res := resynthesized(t, st, 8, 5)
			target, marker, err := st.BeginResynthesis(ctx, store.ResynthesisStart{SourceID: src.ID, Target: "notes-r", TagSet: src.Tagset,
				From: "notes", JobID: 1})
			require.NoError(t, err)
			n, err := st.SaveResynthesisBatch(ctx, store.ResynthesisBatch{SourceID: src.ID, TargetID: target.ID, JobID: 1, Marker: marker, Result: res})
			require.NoError(t, err)
			require.Equal(t, len(docs), n)
			_, err = st.FinishResynthesis(ctx, store.ResynthesisEnd{SourceID: src.ID, TargetID: target.ID, JobID: 1, Marker: marker,
				Provenance: map[string]any{"from": "notes"}})
			require.NoError(t, err)
			// A check report pairs originals with surrogates as the mappings
			// do: sealed the same way.
			report, err := json.Marshal(res.Mappings)
			require.NoError(t, err)
			sealed, err := st.SaveArtifact(ctx, store.ArtifactSpec{Name: "notes-r-check-report.json", ContentType: "application/json",
				JobID: 1, Sealed: true}, report)
			require.NoError(t, err)

			if b == storetest.SQLite {
				fi, err := os.Stat(dsn + ".key")
				require.NoError(t, err, "the key file is made next to the database")
				assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			}

			// The originals to look for: 4 characters or more, and not
			// inside a value the table keeps in clear by design (a weekday
			// or a profession can be another mapping's surrogate too).
			want := map[string]bool{}
			var clear bytes.Buffer
			var originals, surrogates []string
			for _, m := range res.Mappings {
				if m.New {
					want[m.Scope+"\x00"+m.Type+"\x00"+m.Original+"\x00"+m.Surrogate] = true
					fmt.Fprintf(&clear, "%s\x00%s\x00%s\x00%s\x00%s\x00", m.Scope, m.Category, m.Type, m.Surrogate, m.Strategy)
					if len(m.Surrogate) >= 4 {
						surrogates = append(surrogates, m.Surrogate)
					}
				}
			}
			inClear := 0
			for _, m := range res.Mappings {
				switch {
				case !m.New || len(m.Original) < 4 || want[m.Original]:
				case bytes.Contains(clear.Bytes(), []byte(m.Original)):
					inClear++
				default:
					want[m.Original] = true
					originals = append(originals, m.Original)
				}
			}
			require.Greater(t, len(originals), 20)
			require.Less(t, inClear, len(originals)/5, "most originals are searched for")

			check := func(stage string) {
				t.Helper()
				raw := tableBytes(t, st.DB, "surrogate_mappings")
				assert.NotEmpty(t, raw)
				assert.Empty(t, leaked(raw, originals), "%s: original values in the mapping table", stage)
				assert.Empty(t, leaked(tableBytes(t, st.DB, "artifacts"), originals), "%s: original values in the artifacts table", stage)
				a, err := st.Artifact(ctx, sealed.ID)
				require.NoError(t, err)
				assert.Equal(t, report, a.Data, "%s: the check report reads back", stage)

				assert.NotEmpty(t, leaked(raw, surrogates), "%s: the search finds clear values (surrogates)", stage)
				if b == storetest.Postgres {
					if dump := pgDump(t, dsn, "surrogate_mappings"); dump != nil {
						assert.Empty(t, leaked(dump, originals), "%s: original values in pg_dump's output", stage)
						assert.Empty(t, leaked(pgDump(t, dsn, "artifacts"), originals), "%s: original values in the artifacts' dump", stage)

						assert.NotEmpty(t, leaked(dump, surrogates), "%s: the dump holds the surrogates", stage)
					}
				}
				state, err := st.SurrogateState(ctx, src.ID)
				require.NoError(t, err)
				got := map[string]bool{}
				for _, m := range state.Mappings {
					got[m.Scope+"\x00"+m.Type+"\x00"+m.Original+"\x00"+m.Surrogate] = true
				}
				for k := range got {
					assert.True(t, want[k], "%s: a mapping read back that was not written", stage)
				}
				assert.Len(t, state.Mappings, len(got))
				n := 0
				for k := range want {
					if strings.Count(k, "\x00") == 3 {
						n++
						assert.True(t, got[k], "%s: a mapping written did not read back", stage)
					}
				}
				assert.Equal(t, n, len(got))

				ms, err := st.MappingsOf(ctx, src.ID, originals[0])
				require.NoError(t, err)
				require.NotEmpty(t, ms, "%s: lookup by keyed hash", stage)
				for _, m := range ms {
					o, err := st.MappingOriginal(ctx, m)
					require.NoError(t, err)
					assert.True(t, o == originals[0], "%s: lookup found another value", stage)
				}
			}
			check("after resynthesis")

			ring, err := st.KeyRing()
			require.NoError(t, err)
			first := ring.Current()
			use, err := st.KeyUsage(ctx)
			require.NoError(t, err)
			require.Len(t, use, 1)
			assert.Equal(t, first, use[0].KeyID)
			total := use[0].Mappings

			// Another key cannot read them, and says so without the values.
			other, err := store.Open(ctx, dsn, store.WithKeyRing(keys.New()))
			require.NoError(t, err)
			_, err = other.SurrogateState(ctx, src.ID)
			other.Close()
			require.ErrorIs(t, err, keys.ErrDecrypt)
			assert.Empty(t, leaked([]byte(err.Error()), originals))

			// Rotation: a new key in the file, every mapping under it.
			id, err := ring.Rotate()
			require.NoError(t, err)
			require.NoError(t, ring.Save(ring.Path))
			re, err := st.Reencrypt(ctx, ring)
			require.NoError(t, err)
			assert.Equal(t, total, re.Mappings)
			assert.Equal(t, 1, re.Artifacts, "the sealed check report")
			assert.Equal(t, 1, re.Corpora, "the source corpus's data key")
			use, err = st.KeyUsage(ctx)
			require.NoError(t, err)
			assert.Equal(t, []store.KeyUse{{KeyID: id, Mappings: total}}, use)
			check("after rotation")

			// A store opened afresh reads the rotated file.
			again, err := store.Open(ctx, dsn, store.WithKeys(cfg))
			require.NoError(t, err)
			defer again.Close()
			state, err := again.SurrogateState(ctx, src.ID)
			require.NoError(t, err)
			assert.Len(t, state.Mappings, total)
			r2, err := again.KeyRing()
			require.NoError(t, err)
			assert.Equal(t, []string{first, id}, r2.IDs())

			// A ring without the new key names the key it lacks.
			old, err := store.Open(ctx, dsn, store.WithKeyRing(keys.New()))
			require.NoError(t, err)
			defer old.Close()
			_, err = old.SurrogateState(ctx, src.ID)
			require.ErrorIs(t, err, keys.ErrUnknownKey)
		})
	}
}

// TestPostgresNeedsAKey: without a configured key, a PostgreSQL store opens
// but refuses to touch mappings, with a message that says what to set.
func TestPostgresNeedsAKey(t *testing.T) {
	dsn := storetest.DSN(t, storetest.Postgres)
	st, err := store.Open(context.Background(), dsn, store.WithKeys(keys.Config{}))
	require.NoError(t, err)
	defer st.Close()
	_, err = st.KeyRing()
	require.ErrorIs(t, err, keys.ErrNoKey)
	assert.Contains(t, err.Error(), keys.FileEnv)
}

// TestLegacyMappingsEncrypted: a database from before encryption, with its
// originals in clear, is encrypted when opened, and the file keeps no trace
// of them.
func TestLegacyMappingsEncrypted(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "old.db")
	st, err := store.Open(ctx, dsn)
	require.NoError(t, err)
	c, err := st.Client.Corpus.Create().SetName("old").SetTagset("i2b2-2014").Save(ctx)
	require.NoError(t, err)
	// The table as the schema before encryption made it, with no data
	// upgrade recorded.
	_, err = st.DB.Exec(`DROP TABLE surrogate_mappings`)
	require.NoError(t, err)
	_, err = st.DB.Exec(`DROP TABLE schema_steps`)
	require.NoError(t, err)
	_, err = st.DB.Exec(`CREATE TABLE surrogate_mappings (id integer PRIMARY KEY AUTOINCREMENT NOT NULL,
		corpus_id integer NOT NULL, scope text NOT NULL, category text NOT NULL, type text NOT NULL,
		original text NOT NULL, surrogate text NOT NULL, strategy text NOT NULL, job_id integer NOT NULL,
		created_at datetime NOT NULL)`)
	require.NoError(t, err)
	secrets := []string{"Quentin Legacyperson", "Zebulon Oldtimer"}
	for i, s := range secrets {
		_, err = st.DB.Exec(`INSERT INTO surrogate_mappings (corpus_id, scope, category, type, original, surrogate, strategy, job_id, created_at)
			VALUES (?, 'corpus', 'NAME', 'PATIENT', ?, ?, 'table', 1, CURRENT_TIMESTAMP)`, c.ID, s, fmt.Sprintf("Surrogate %d", i))
		require.NoError(t, err)
	}
	// A check report saved in clear, as before reports were sealed.
	report := []byte(`{"review": [{"Original": "Quentin Legacyperson", "Surrogate": "Surrogate 0"}]}`)
	clearReport, err := st.SaveArtifact(ctx, store.ArtifactSpec{Name: "old-r-check-report.json", ContentType: "application/json", JobID: 1}, report)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st, err = store.Open(ctx, dsn)
	require.NoError(t, err)
	a, err := st.Artifact(ctx, clearReport.ID)
	require.NoError(t, err)
	assert.Equal(t, report, a.Data, "the sealed report reads back")
	state, err := st.SurrogateState(ctx, c.ID)
	require.NoError(t, err)
	var got []string
	for _, m := range state.Mappings {
		got = append(got, m.Original)
	}
	sort.Strings(got)
	assert.Equal(t, secrets, got)
	require.NoError(t, st.Close())

	for _, f := range []string{dsn, dsn + "-wal"} {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		assert.Empty(t, leaked(data, secrets), "%s keeps a clear original", filepath.Base(f))
	}
}

// A run's corpus-scope mappings are saved a few to a transaction at its end;
// those an earlier attempt of the job saved before it stopped are not saved
// twice. A later run reads the corpus-scope ones and the shifts at its start
// (PlanState) and the patients' mappings a batch of patients at a time, the
// rows a few at a time.
func TestResynthesisStateInParts(t *testing.T) {
	defer store.SetMappingBatch(3)()
	defer store.SetMappingReadBatch(4)()
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st, err := store.Open(ctx, storetest.DSN(t, b), store.WithKeyRing(keys.New()))
			require.NoError(t, err)
			defer st.Close()
			src, _, res := resynthesized(t, st, 6, 3)
			var patient, corpus []surrogate.Mapping
			for _, m := range res.Mappings {
				if m.Scope == surrogate.ScopeCorpus {
					corpus = append(corpus, m)
				} else {
					patient = append(patient, m)
				}
			}
			require.Greater(t, len(corpus), 10, "corpus-scope mappings to save in parts")
			const job = 5
			target, marker, err := st.BeginResynthesis(ctx, store.ResynthesisStart{SourceID: src.ID, Target: "notes-r", TagSet: src.Tagset,
				From: "notes", JobID: job})
			require.NoError(t, err)
			batch := *res
			batch.Mappings = patient
			_, err = st.SaveResynthesisBatch(ctx, store.ResynthesisBatch{SourceID: src.ID, TargetID: target.ID, JobID: job, Marker: marker, Result: &batch})
			require.NoError(t, err)
			// What an attempt that stopped halfway through the end saved.
			require.NoError(t, st.SaveMappings(ctx, src.ID, job, corpus[:2]))

			_, err = st.FinishResynthesis(ctx, store.ResynthesisEnd{SourceID: src.ID, TargetID: target.ID, JobID: job, Marker: marker,
				Provenance: map[string]any{"from": "notes"}, Mappings: slices.Values(corpus)})
			require.NoError(t, err)
			state, err := st.SurrogateStateBefore(ctx, src.ID, job+1) // every job's
			require.NoError(t, err)
			var got, want []string
			for _, m := range state.Mappings {
				if m.Scope == surrogate.ScopeCorpus {
					got = append(got, m.Type+"\x00"+m.Original+"\x00"+m.Surrogate)
				}
			}
			for _, m := range corpus {
				if m.New {
					want = append(want, m.Type+"\x00"+m.Original+"\x00"+m.Surrogate)
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			assert.Equal(t, want, got, "the run's corpus-scope mappings, each once")

			all, err := st.SurrogateState(ctx, src.ID)
			require.NoError(t, err)
			plan, patientMappings, err := st.PlanState(ctx, src.ID, job+1)
			require.NoError(t, err)
			assert.True(t, patientMappings)
			assert.Equal(t, all.Shifts, plan.Shifts)
			assert.Len(t, plan.Mappings, len(want), "the corpus-scope mappings only")
			for _, m := range plan.Mappings {
				assert.Equal(t, surrogate.ScopeCorpus, m.Scope)
			}
			retry, patientMappings, err := st.PlanState(ctx, src.ID, job)
			require.NoError(t, err)
			assert.False(t, patientMappings, "a retry of the job sees none of its own")
			assert.Empty(t, retry.Mappings)
			var patients []string
			perPatient := map[string]int{}
			for _, m := range all.Mappings {
				if p, ok := strings.CutPrefix(m.Scope, "patient:"); ok {
					if perPatient[p] == 0 {
						patients = append(patients, p)
					}
					perPatient[p]++
				}
			}
			require.Greater(t, len(patients), 2)
			some, err := st.PatientMappingsBefore(ctx, src.ID, job+1, patients[:2])
			require.NoError(t, err)
			assert.Len(t, some.Mappings, perPatient[patients[0]]+perPatient[patients[1]])
			for i, m := range some.Mappings {
				assert.Contains(t, []string{"patient:" + patients[0], "patient:" + patients[1]}, m.Scope)
				assert.Equal(t, job, some.MappingJobs[i])
			}

			// What a run took over is counted against the plan's state and
			// the batch's.
			reuse := plan.Reuse()
			reuse.Batch(some)
			used := surrogate.Result{Mappings: append(slices.Clone(plan.Mappings), some.Mappings...)} // New: false, as stored
			reuse.Add(&used)
			counted, err := st.Reused(ctx, reuse)
			require.NoError(t, err)
			require.Len(t, counted, 1)
			assert.Equal(t, len(used.Mappings), counted[0].Mappings)
		})
	}
}
