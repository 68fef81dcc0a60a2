package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/artifact"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/evaluation"
	"deidcorpus/internal/jsonmap"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/surrogate"
)

// EvaluationInput says what an evaluation scored.
type EvaluationInput struct {
	CorpusID  int
	Gold      string
	System    string
	Options   evaluate.Options
	JobID     int
	CreatedBy string
	Report    *evaluate.Report
}

// SaveEvaluation stores an evaluation's report, once per job: a retried job
// finds the evaluation its earlier attempt saved.
func (s *Store) SaveEvaluation(ctx context.Context, in EvaluationInput) (*ent.Evaluation, error) {
	if in.JobID != 0 {
		ev, err := s.Client.Evaluation.Query().Where(evaluation.JobID(in.JobID)).First(ctx)
		if err == nil {
			return ev, nil
		}
		if !ent.IsNotFound(err) {
			return nil, err
		}
	}
	report, err := json.Marshal(in.Report)
	if err != nil {
		return nil, err
	}
	opts, err := jsonmap.Of(in.Options)
	if err != nil {
		return nil, err
	}
	p, r, f := in.Report.Headline()
	c := s.Client.Evaluation.Create().SetCorpusID(in.CorpusID).SetGoldSet(in.Gold).SetSystemSet(in.System).
		SetMetric(string(in.Report.Metric)).SetOptions(opts).SetPrecision(p).SetRecall(r).SetF1(f).
		SetReport(report).SetCreatedBy(in.CreatedBy)
	if in.JobID != 0 {
		c.SetJobID(in.JobID)
	}
	return c.Save(ctx)
}

// EvaluationReport decodes an evaluation's full report.
func (s *Store) EvaluationReport(ev *ent.Evaluation) (*evaluate.Report, error) {
	var r evaluate.Report
	if err := json.Unmarshal(ev.Report, &r); err != nil {
		return nil, apperr.New(apperr.Internal, "evaluation %d: damaged report: %v", ev.ID, err)
	}
	return &r, nil
}

// ArtifactSpec says what a stored file is and whose.
type ArtifactSpec struct {
	Name, ContentType string
	JobID             int    // the job that made it (0: an input stored with its job)
	CorpusID          int    // the corpus whose text it holds (0: none)
	CreatedBy         string // the account it is for
	// Sealed: the file pairs original PHI values with their surrogates (a
	// check report). It is encrypted under the key ring, as the mappings
	// are, so that the database file alone does not hand it out.
	Sealed bool
}

// SaveArtifact stores a file a job produced, once per job and name.
func (s *Store) SaveArtifact(ctx context.Context, spec ArtifactSpec, data []byte) (*ent.Artifact, error) {
	a, err := s.jobArtifact(ctx, spec)
	if err == nil {
		return s.openArtifact(a)
	}
	if !ent.IsNotFound(err) {
		return nil, err
	}
	return s.createArtifact(ctx, s.Client, spec, data)
}

// jobArtifact finds the file a job stored under the spec's name: what its
// retry finds instead of making it again.
func (s *Store) jobArtifact(ctx context.Context, spec ArtifactSpec) (*ent.Artifact, error) {
	return s.Client.Artifact.Query().Where(artifact.JobID(spec.JobID), artifact.Name(spec.Name)).First(ctx)
}

func (s *Store) createArtifact(ctx context.Context, client *ent.Client, spec ArtifactSpec, data []byte) (*ent.Artifact, error) {
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	create := artifactCreate(client, spec).SetSize(len(data)).SetSha256(hash).SetData(data)
	if spec.Sealed {
		r, err := s.KeyRing()
		if err != nil {
			return nil, err
		}
		keyID, enc := r.Encrypt(data, artifactAD(hash))
		create.SetData(enc).SetKeyID(keyID)
	}
	a, err := create.Save(ctx)
	if err != nil {
		return nil, err
	}
	a.Data, a.KeyID = data, ""
	return a, nil
}

func artifactCreate(client *ent.Client, spec ArtifactSpec) *ent.ArtifactCreate {
	create := client.Artifact.Create().SetName(spec.Name).SetContentType(spec.ContentType).SetCreatedBy(spec.CreatedBy)
	if spec.JobID != 0 {
		create.SetJobID(spec.JobID)
	}
	if spec.CorpusID != 0 {
		create.SetCorpusID(spec.CorpusID)
	}
	return create
}

// SaveArtifactFrom stores the file write writes, once per job and name, in
// chunks as it is written: memory holds a chunk, never the file. The row
// naming the chunks is written last, so a failed write leaves no artifact. A
// retried job finds its predecessor's file, and write is not called. Sealed
// files are saved whole, with SaveArtifact.
func (s *Store) SaveArtifactFrom(ctx context.Context, spec ArtifactSpec, write func(w io.Writer) error) (*ent.Artifact, error) {
	if spec.Sealed {
		return nil, errors.New("a sealed artifact is encrypted whole: save it with SaveArtifact")
	}
	a, err := s.jobArtifact(ctx, spec)
	if err == nil || !ent.IsNotFound(err) {
		return a, err
	}
	c, err := s.WriteChunks(ctx, write)
	if err != nil {
		return nil, err
	}
	if a, err = c.create(ctx, s.Client, spec); err != nil {
		s.dropChunks(ctx, c.key)
		return nil, err
	}
	return a, nil
}

// Chunks is a file stored in chunks by WriteChunks that no artifact names
// yet.
type Chunks struct {
	key    string
	size   int
	sha256 string
}

// WriteChunks stores the file write writes in chunks, each in its own short
// statement, as it is written: memory holds a chunk, never the file, and the
// single writer is never held for the whole file. The artifact naming them
// is written later, in a transaction of the caller's (JobTx.ArtifactOf); a
// caller whose transaction fails removes them with DropChunks (the next
// creation a day later removes those of a process killed in between). A
// write that fails leaves no chunk.
func (s *Store) WriteChunks(ctx context.Context, write func(w io.Writer) error) (*Chunks, error) {
	if err := s.dropAbandonedChunks(ctx); err != nil {
		return nil, err
	}
	w := newChunkWriter(s.chunkSize, s.insertChunk(ctx))
	err := write(w)
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		s.dropChunks(ctx, w.key)
		return nil, err
	}
	return &Chunks{key: w.key, size: w.n, sha256: hex.EncodeToString(w.sum.Sum(nil))}, nil
}

// DropChunks removes chunks that WriteChunks stored, unless an artifact
// names them: a transaction that reported an error may still have committed.
func (s *Store) DropChunks(ctx context.Context, c *Chunks) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if named, err := s.Client.Artifact.Query().Where(artifact.ContentKey(c.key)).Exist(ctx); err != nil || named {
		return
	}
	s.dropChunks(ctx, c.key)
}

// create writes the artifact row that names the chunks.
func (c *Chunks) create(ctx context.Context, client *ent.Client, spec ArtifactSpec) (*ent.Artifact, error) {
	if spec.Sealed {
		return nil, errors.New("a sealed artifact is encrypted whole: save it with SaveArtifact")
	}
	return artifactCreate(client, spec).SetSize(c.size).SetSha256(c.sha256).
		SetData([]byte{}).SetContentKey(c.key).Save(ctx)
}

// ArtifactContent reads a stored file: from its chunks, a chunk at a time,
// or from the row for one stored whole (opened by Artifact). A file whose
// chunks do not add up to its size and SHA-256 ends in an error, not early.
func (s *Store) ArtifactContent(ctx context.Context, a *ent.Artifact) io.Reader {
	if a.ContentKey == "" {
		return bytes.NewReader(a.Data)
	}
	return &checkedReader{r: s.chunks(ctx, a.ContentKey), sum: sha256.New(), a: a}
}

// ArtifactReaderAt reads a stored file at any offset, loading only the
// chunks that hold what is read: a zip archive's end records without the
// rest of it. Unlike ArtifactContent it does not check the file's hash.
func (s *Store) ArtifactReaderAt(ctx context.Context, a *ent.Artifact) (io.ReaderAt, error) {
	if a.ContentKey == "" {
		return bytes.NewReader(a.Data), nil
	}
	r, err := s.chunksAt(ctx, a.ContentKey)
	if err != nil {
		return nil, err
	}
	if r.size() != int64(a.Size) {
		return nil, apperr.New(apperr.Internal, "artifact %d (%s): its stored chunks are not the file stored (%d bytes of %d): it is damaged", a.ID, a.Name, r.size(), a.Size)
	}
	return r, nil
}

// checkedReader reads an artifact's chunks and, at their end, checks them
// against the size and hash the artifact was stored with.
type checkedReader struct {
	r   io.Reader
	sum hash.Hash
	n   int
	a   *ent.Artifact
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	c.sum.Write(p[:n])
	if err == io.EOF && (c.n != c.a.Size || hex.EncodeToString(c.sum.Sum(nil)) != c.a.Sha256) {
		err = apperr.New(apperr.Internal, "artifact %d (%s): its stored chunks are not the file stored (%d bytes read of %d, or another SHA-256): it is damaged", c.a.ID, c.a.Name, c.n, c.a.Size)
	}
	return n, err
}

// artifactAD binds a sealed artifact's ciphertext to its content hash.
func artifactAD(sha256Hex string) []byte { return []byte("artifact " + sha256Hex) }

// openArtifact decrypts a sealed artifact's data in place.
func (s *Store) openArtifact(a *ent.Artifact) (*ent.Artifact, error) {
	if a.KeyID == "" {
		return a, nil
	}
	r, err := s.KeyRing()
	if err != nil {
		return nil, err
	}
	pt, err := r.Decrypt(a.KeyID, a.Data, artifactAD(a.Sha256))
	if err != nil {
		return nil, fmt.Errorf("artifact %d: %w", a.ID, err)
	}
	a.Data, a.KeyID = pt, ""
	return a, nil
}

// DeleteStoredWhole removes files stored whole (SaveArtifact), such as the
// sealed working files a job needs no more; a file stored in chunks is left.
func (s *Store) DeleteStoredWhole(ctx context.Context, ids ...int) error {
	_, err := s.Client.Artifact.Delete().Where(artifact.IDIn(ids...), artifact.ContentKey("")).Exec(ctx)
	return Coded(err)
}

// Artifact returns a stored file, decrypted.
func (s *Store) Artifact(ctx context.Context, id int) (*ent.Artifact, error) {
	a, err := s.Client.Artifact.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no artifact %d", id)
	}
	if err != nil {
		return nil, err
	}
	return s.openArtifact(a)
}

// CompareEvaluations tests whether two systems scored against the same gold
// set differ significantly (pipeline/evaluate.Compare).
func (s *Store) CompareEvaluations(ctx context.Context, a, b int, opt evaluate.CompareOptions) (*evaluate.Comparison, error) {
	// Refused before the sets are loaded.
	if err := evaluate.CheckResamples(opt.Shuffles, opt.Bootstrap); err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	ea, err := s.Client.Evaluation.Get(ctx, a)
	if err != nil {
		return nil, apperr.New(apperr.NotFound, "no evaluation %d", a)
	}
	eb, err := s.Client.Evaluation.Get(ctx, b)
	if err != nil {
		return nil, apperr.New(apperr.NotFound, "no evaluation %d", b)
	}
	if ea.CorpusID != eb.CorpusID || ea.GoldSet != eb.GoldSet {
		return nil, apperr.New(apperr.Invalid, "evaluations %d and %d did not score the same gold set", a, b)
	}
	c, err := s.Client.Corpus.Get(ctx, ea.CorpusID)
	if err != nil {
		return nil, err
	}
	var docs [3][]pipeline.Document
	for i, set := range []string{ea.GoldSet, ea.SystemSet, eb.SystemSet} {
		if docs[i], err = s.LoadDocuments(ctx, c, set); err != nil {
			return nil, err
		}
	}
	cmp, err := evaluate.Compare(docs[0], docs[1], docs[2], opt)
	return cmp, apperr.Wrap(apperr.Invalid, err)
}

// resynthesisRuns are the jobs of every resynthesis run into a surrogate
// corpus, oldest first; none for another corpus.
func resynthesisRuns(c *ent.Corpus) []int {
	first, ok := c.Provenance["job"].(float64)
	if c.Origin != corpus.OriginResynthesis || !ok {
		return nil
	}
	runs := []int{int(first)}
	later, _ := c.Provenance["runs"].([]any)
	for _, r := range later {
		if m, ok := r.(map[string]any); ok {
			if j, ok := m["job"].(float64); ok {
				runs = append(runs, int(j))
			}
		}
	}
	return runs
}

// CheckReport returns the full check report of a resynthesis run into a
// surrogate corpus: the latest run's, or job's when job > 0 (a run that added
// notes checks those notes only), with the job of the report and those of
// every run into the corpus, oldest first. It names original values: it is
// PHI.
func (s *Store) CheckReport(ctx context.Context, corpusName string, job int) (file *surrogate.CheckFile, reportJob int, runs []int, err error) {
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, 0, nil, err
	}
	runs = resynthesisRuns(c)
	if len(runs) == 0 {
		return nil, 0, nil, apperr.New(apperr.NotFound, "corpus %q was not made by resynthesis", corpusName)
	}
	switch {
	case job == 0:
		job = runs[len(runs)-1]
	case !slices.Contains(runs, job):
		return nil, 0, nil, apperr.New(apperr.NotFound, "job %d did not resynthesize into corpus %q (its runs: jobs %v)", job, corpusName, runs)
	}
	a, err := s.Client.Artifact.Query().
		Where(artifact.JobID(job), artifact.NameHasSuffix("-check-report.json")).First(ctx)
	if ent.IsNotFound(err) {
		return nil, 0, nil, apperr.New(apperr.NotFound, "no check report for corpus %q from job %d", corpusName, job)
	}
	if err != nil {
		return nil, 0, nil, err
	}
	if a, err = s.openArtifact(a); err != nil {
		return nil, 0, nil, err
	}
	file = new(surrogate.CheckFile)
	if err := json.Unmarshal(a.Data, file); err != nil {
		return nil, 0, nil, fmt.Errorf("the check report of corpus %q from job %d: %w", corpusName, job, err)
	}
	return file, job, runs, nil
}

// Evaluations lists the stored evaluations the viewer sees, newest first,
// with their corpus; of one corpus when corpusName is given. limit <= 0
// lists them all.
func (s *Store) Evaluations(ctx context.Context, corpusName string, limit int) ([]*ent.Evaluation, error) {
	q := s.Client.Evaluation.Query().WithCorpus().Order(ent.Desc(evaluation.FieldID))
	if corpusName != "" {
		c, err := s.CorpusByName(ctx, corpusName)
		if err != nil {
			return nil, err
		}
		q.Where(evaluation.CorpusID(c.ID))
	}
	if limit > 0 {
		q.Limit(limit)
	}
	return q.All(ctx)
}

// Evaluation returns one stored evaluation with its corpus, not_found when
// there is none or the viewer may not see it.
func (s *Store) Evaluation(ctx context.Context, id int) (*ent.Evaluation, error) {
	ev, err := s.Client.Evaluation.Query().Where(evaluation.ID(id)).WithCorpus().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no evaluation %d (deidcorpus eval list shows them)", id)
	}
	return ev, err
}
