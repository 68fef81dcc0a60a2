package tagger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"deidcorpus/internal/strictjson"
	"deidcorpus/pipeline"
)

// Config is everything that shapes a model: features, training and
// post-processing. It is stored in the model; read one from JSON with
// ReadConfig, which starts from DefaultConfig so a file need only name what
// it changes.
type Config struct {
	Features FeatureConfig `json:"features"`
	Training TrainOptions  `json:"training"`
	Post     PostConfig    `json:"post"`
	// RecallBias is added at decoding to the scores of the B- and I- labels
	// of a type (keyed by type, "*" for every type not named): MIST's knob to
	// trade precision for recall. Tag options can override it per run.
	RecallBias map[string]float64 `json:"recall_bias,omitempty"`
}

// DefaultConfig is the configuration the reported figures were measured with,
// its settings chosen by cross-validation on MEDDOCAN train (see docs/tagger.md).
func DefaultConfig() Config {
	return Config{
		Features: DefaultFeatures(), Training: DefaultTraining(), Post: DefaultPost(),
		RecallBias: map[string]float64{"*": 0.4},
	}
}

// ErrConfig marks an invalid configuration and ErrInput unusable training
// input (no documents, too many types); callers map both to "invalid".
var (
	ErrConfig = errors.New("invalid tagger config")
	ErrInput  = errors.New("invalid tagger input")
)

// ReadConfig reads a JSON configuration over the defaults; unknown fields are
// an error, named by their path, so that a misspelt option is not silently
// ignored. recall_bias entries are added to the default one ("*": 0.4); set
// "*" to 0 to drop it.
func ReadConfig(r io.Reader) (Config, error) {
	cfg := DefaultConfig()
	data, err := io.ReadAll(r)
	if err != nil {
		return cfg, err
	}
	if err := strictjson.Decode(data, &cfg); err != nil {
		hint := ""
		if se := (*strictjson.Error)(nil); errors.As(err, &se) && se.Path == "recall_bias" {
			hint = ` (a bias per type, "*" for every other: {"*": 0.4})`
		}
		return cfg, fmt.Errorf("%w: %v%s", ErrConfig, err, hint)
	}
	return cfg, cfg.Validate()
}

// Validate reports the first option out of range.
func (c Config) Validate() error {
	if err := c.Features.validate(); err != nil {
		return fmt.Errorf("%w: features: %v", ErrConfig, err)
	}
	if err := c.Training.validate(); err != nil {
		return fmt.Errorf("%w: training: %v", ErrConfig, err)
	}
	if err := c.Post.validate(); err != nil {
		return fmt.Errorf("%w: post: %v", ErrConfig, err)
	}
	for k, v := range c.RecallBias {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: recall_bias[%s] is not finite", ErrConfig, k)
		}
	}
	return nil
}

// Model is a trained tagger: the artifact Save writes and Load reads.
type Model struct {
	Config Config
	Types  []SpanType // the label set, O and B-/I- of each type
	Meta   Meta

	attrs     []string
	attrIndex map[string]int32
	crf       *crf
	learnt    learnt
	labels    *Labels
	ext       *extractor
}

// learnt is what training found beside the weights: trigger words, the
// gazetteer, and the post-processing decisions.
type learnt struct {
	Triggers  map[string][]int    `json:"triggers,omitempty"`        // word -> type indices
	Gazetteer map[string][]string `json:"gazetteer,omitempty"`       // phrase -> types
	Parts     map[string][]string `json:"gazetteer_parts,omitempty"` // word of a phrase -> types
	Rules     []RuleBinding       `json:"rules,omitempty"`
	Templates []RuleBinding       `json:"templates,omitempty"` // trusted templates
	Propagate []string            `json:"propagate,omitempty"` // types whose terms are trusted
	TrimEdges []string            `json:"trim_edges,omitempty"`
	Titles    map[string][]string `json:"titles,omitempty"`  // type -> words trimmed from its spans' start
	Retypes   []RuleBinding       `json:"retypes,omitempty"` // template matches that take the preceding span's type
}

// Meta records how a model was trained. It is not part of the model's hash:
// two trainings on the same data with the same options hash the same even
// though they took different times.
type Meta struct {
	Documents  int           `json:"documents"`
	Tokens     int           `json:"tokens"`
	Spans      int           `json:"spans"`
	Attributes int           `json:"attributes"`
	Features   int           `json:"features"`
	Iterations int           `json:"iterations"`
	Loss       float64       `json:"loss"`
	Duration   time.Duration `json:"duration_ns"`
	Trained    time.Time     `json:"trained"`
	// Calibration holds the held-out risk at each operating point; nil
	// for a model not calibrated.
	Calibration *Calibration `json:"calibration,omitempty"`
}

// Progress reports training to the caller (the job layer's progress bar).
type Progress struct {
	Stage     string // "features", "train", "post"
	Done      int    // documents prepared, or L-BFGS iterations done
	Total     int    // documents, or the iteration limit
	Loss      float64
	GradNorm  float64
	Attribute int // attributes so far
}

// Train fits a model on documents with gold spans. Every span type present
// becomes a label; documents of the same Patient are treated as one
// patient's records. progress may be nil. Cancelling ctx stops training with
// ctx's error.
func Train(ctx context.Context, docs []pipeline.Document, cfg Config, progress func(Progress)) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%w: no training documents", ErrInput)
	}
	if progress == nil {
		progress = func(Progress) {}
	}
	started := time.Now()
	m := &Model{Config: cfg}
	ts, err := m.prepareTraining(docs)
	if err != nil {
		return nil, err
	}
	seqs, counts, err := m.trainingSequences(ctx, ts, progress)
	if err != nil {
		return nil, err
	}
	if cfg.Training.MinFreq > 1 {
		m.dropRare(seqs, counts, cfg.Training.MinFreq)
	}
	m.crf = buildCRF(seqs, len(m.attrs), m.labels.N())
	iters, loss, err := m.crf.fit(ctx, seqs, cfg.Training, func(it IterationInfo) {
		progress(Progress{Stage: "train", Done: it.Iteration, Total: cfg.Training.MaxIterations, Loss: it.Loss, GradNorm: it.GradNorm})
	})
	if err != nil {
		return nil, fmt.Errorf("tagger: training: %w", err)
	}
	if cfg.Training.PruneBelow > 0 {
		m.dropNegligible(cfg.Training.PruneBelow)
	}
	progress(Progress{Stage: "post", Done: 0, Total: 1})
	gold := goldTokenSpans(docs, ts.toks, m.Types)
	m.learnt.Rules = append(bindRules(ts.toks, gold, m.Types, cfg.Post), bindAttributions(ts.toks, gold, m.Types, m.ext.gaz, cfg.Post)...)
	m.learnt.Templates = bindTemplates(ts.toks, gold, m.Types, cfg.Post)
	m.learnt.Propagate = propagatingTypes(ts.toks, gold, m.Types, cfg.Post)
	m.learnt.TrimEdges = trimmedTypes(ts.toks, gold, m.Types)
	m.learnt.Titles = titleWords(ts.toks, gold, m.Types)
	m.learnt.Retypes = learnRetypes(ts.toks, gold, m.Types)
	progress(Progress{Stage: "post", Done: 1, Total: 1})
	tokens, spans := 0, 0
	for i, t := range ts.toks {
		tokens += len(t.Tokens)
		spans += len(docs[i].Spans)
	}
	m.Meta = Meta{
		Documents: len(docs), Tokens: tokens, Spans: spans,
		Attributes: len(m.attrs), Features: len(m.crf.w),
		Iterations: iters, Loss: loss,
		Duration: time.Since(started), Trained: started.UTC().Truncate(time.Second),
	}
	return m, nil
}

// trainingSet is the training documents made ready for feature generation:
// what Train and WriteCRFsuite share, so that the export holds exactly the
// features the CRF trains on.
type trainingSet struct {
	toks    []*Tokens
	ys      [][]int
	foldGaz []*phraseSet // gazetteer of the other folds, by fold
}

// prepareTraining tokenizes and labels docs and learns the label set, the
// trigger words and the gazetteer.
func (m *Model) prepareTraining(docs []pipeline.Document) (*trainingSet, error) {
	cfg := m.Config
	m.labels = labelsOf(docs)
	m.Types = m.labels.Types
	if m.labels.N() > math.MaxUint16 {
		return nil, fmt.Errorf("%w: %d span types are too many", ErrInput, len(m.Types))
	}
	ts := &trainingSet{toks: make([]*Tokens, len(docs)), ys: make([][]int, len(docs))}
	for i, d := range docs {
		ts.toks[i] = Tokenize(d.Text)
		ts.ys[i] = m.labels.encode(ts.toks[i], pipeline.NewIndex(d.Text), d.Spans)
	}
	if cfg.Features.Triggers {
		m.learnt.Triggers = learnTriggers(ts.toks, ts.ys, len(m.Types), cfg.Features)
	}
	if cfg.Features.Gazetteer {
		full := gazetteerOf(docs, ts.toks, gazetteerMaxWords)
		m.learnt.Gazetteer, m.learnt.Parts = full.types, full.parts
		k := cfg.Features.GazetteerFolds
		for f := 0; f < k; f++ {
			var ds []pipeline.Document
			var tks []*Tokens
			for i := range docs {
				if i%k != f {
					ds, tks = append(ds, docs[i]), append(tks, ts.toks[i])
				}
			}
			ts.foldGaz = append(ts.foldGaz, gazetteerOf(ds, tks, gazetteerMaxWords))
		}
	}
	return ts, m.init()
}

// trainingAttributes calls f with every attribute of every token of
// training document i, tokens in order. A training document sees the
// gazetteer of the other folds only.
func (m *Model) trainingAttributes(ts *trainingSet, i int, buf []byte, f func(t int, attr []byte)) []byte {
	x := m.ext
	if ts.foldGaz != nil {
		xc := *m.ext
		xc.gaz = ts.foldGaz[i%len(ts.foldGaz)]
		x = &xc
	}
	d := x.prepare(ts.toks[i], nil)
	for t := range ts.toks[i].Tokens {
		buf = x.emit(d, t, buf, func(b []byte) { f(t, b) })
	}
	return buf
}

// trainingSequences generates the training documents' attributes and
// numbers them in order of first appearance (deterministic for a given
// document order); counts[id] is how often attribute id occurs.
func (m *Model) trainingSequences(ctx context.Context, ts *trainingSet, progress func(Progress)) (seqs []sequence, counts []int, err error) {
	m.attrIndex = map[string]int32{}
	seqs = make([]sequence, len(ts.toks))
	var buf []byte
	for i := range ts.toks {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s := sequence{off: make([]int32, 1, len(ts.toks[i].Tokens)+1), y: ts.ys[i]}
		buf = m.trainingAttributes(ts, i, buf, func(t int, b []byte) {
			if t+1 > s.len() {
				s.off = append(s.off, int32(len(s.attrs)))
			}
			id, ok := m.attrIndex[string(b)]
			if !ok {
				id = int32(len(m.attrs))
				m.attrs = append(m.attrs, string(b))
				m.attrIndex[m.attrs[id]] = id
				counts = append(counts, 0)
			}
			counts[id]++
			s.attrs = append(s.attrs, id)
			s.off[t+1] = int32(len(s.attrs))
		})
		seqs[i] = s
		if i%50 == 0 || i == len(ts.toks)-1 {
			progress(Progress{Stage: "features", Done: i + 1, Total: len(ts.toks), Attribute: len(m.attrs)})
		}
	}
	return seqs, counts, nil
}

// gazetteerMaxWords bounds the phrases the learnt gazetteer keeps.
const gazetteerMaxWords = 6

// init builds the extractor and label set from the model's stored parts.
func (m *Model) init() error {
	m.labels = newLabels(m.Types)
	m.ext = &extractor{cfg: m.Config.Features, types: m.Types, triggers: m.learnt.Triggers}
	if m.learnt.Gazetteer != nil {
		p := &phraseSet{types: m.learnt.Gazetteer, parts: m.learnt.Parts, maxWords: 1}
		for k := range p.types {
			p.maxWords = max(p.maxWords, strings.Count(k, " ")+1)
		}
		p.maxWords = min(p.maxWords, gazetteerMaxWords)
		p.sortKeys()
		m.ext.gaz = p
	}
	if name := m.Config.Features.Lexicon; name != "" {
		lex, ok := lookupLexicon(name)
		if !ok {
			return fmt.Errorf("tagger: model needs lexicon %q, which is not registered", name)
		}
		m.ext.lex = lex
	}
	return nil
}

// dropRare renumbers attributes, keeping those seen at least minFreq times.
func (m *Model) dropRare(seqs []sequence, counts []int, minFreq int) {
	remap := make([]int32, len(m.attrs))
	var kept []string
	for id, a := range m.attrs {
		if counts[id] >= minFreq {
			remap[id] = int32(len(kept))
			kept = append(kept, a)
		} else {
			remap[id] = -1
		}
	}
	for si := range seqs {
		s := &seqs[si]
		attrs := s.attrs[:0]
		off := s.off
		start := int32(0)
		for t := 0; t < s.len(); t++ {
			from, to := start, off[t+1]
			start = to
			for _, a := range s.attrs[from:to] {
				if r := remap[a]; r >= 0 {
					attrs = append(attrs, r)
				}
			}
			off[t+1] = int32(len(attrs))
		}
		s.attrs = attrs
	}
	m.attrs = kept
	m.attrIndex = make(map[string]int32, len(kept))
	for i, a := range kept {
		m.attrIndex[a] = int32(i)
	}
}

// dropNegligible removes, once the CRF is trained, the attributes whose
// every state weight is below eps in magnitude (TrainOptions.PruneBelow),
// and their features.
func (m *Model) dropNegligible(eps float64) {
	c := m.crf
	var kept []string
	attrStart := []int32{0}
	var featLabel []uint16
	var w []float64
	for a, name := range m.attrs {
		from, to := c.attrStart[a], c.attrStart[a+1]
		top := 0.0
		for _, v := range c.w[from:to] {
			top = max(top, math.Abs(v))
		}
		if top < eps {
			continue
		}
		kept = append(kept, name)
		featLabel = append(featLabel, c.featLabel[from:to]...)
		w = append(w, c.w[from:to]...)
		attrStart = append(attrStart, int32(len(featLabel)))
	}
	c.attrStart, c.featLabel, c.w = attrStart, featLabel, append(w, c.w[c.nState():]...)
	m.attrs = kept
	m.attrIndex = make(map[string]int32, len(kept))
	for i, a := range kept {
		m.attrIndex[a] = int32(i)
	}
}

// buildCRF creates the state features: every (attribute, label) pair the
// training data shows, as CRFsuite does without its "possible states" option.
func buildCRF(seqs []sequence, nAttrs, L int) *crf {
	words := (L + 63) / 64
	seen := make([]uint64, nAttrs*words)
	for si := range seqs {
		s := &seqs[si]
		for t := 0; t < s.len(); t++ {
			y := s.y[t]
			for _, a := range s.attrs[s.off[t]:s.off[t+1]] {
				seen[int(a)*words+y/64] |= 1 << (y % 64)
			}
		}
	}
	c := &crf{L: L, attrStart: make([]int32, 1, nAttrs+1)}
	for a := 0; a < nAttrs; a++ {
		for y := 0; y < L; y++ {
			if seen[a*words+y/64]&(1<<(y%64)) != 0 {
				c.featLabel = append(c.featLabel, uint16(y))
			}
		}
		c.attrStart = append(c.attrStart, int32(len(c.featLabel)))
	}
	c.w = make([]float64, len(c.featLabel)+L*L)
	return c
}

// learnTriggers finds, per type, the words that precede its spans within the
// configured window often enough and in a large enough share of their
// occurrences (Yang 3.2's lexical cues, learnt rather than listed, which is
// what a Spanish corpus needs).
func learnTriggers(toks []*Tokens, ys [][]int, nTypes int, cfg FeatureConfig) map[string][]int {
	total := map[string]int{}
	before := map[string][]int{}
	for di, tk := range toks {
		y := ys[di]
		for i := range tk.Tokens {
			lw := strings.ToLower(tk.Word(i))
			if !isWordy(lw) {
				continue
			}
			total[lw]++
		}
		for i := range tk.Tokens {
			if y[i] == 0 || y[i]%2 == 0 {
				continue
			}
			ty := typeOf(y[i])
			seen := map[string]bool{}
			for k, back := i-1, 0; k >= 0 && back < cfg.TriggerWindow; k-- {
				lw := strings.ToLower(tk.Word(k))
				if !isWordy(lw) {
					continue
				}
				back++
				if y[k] != 0 || seen[lw] {
					continue
				}
				seen[lw] = true
				if before[lw] == nil {
					before[lw] = make([]int, nTypes)
				}
				before[lw][ty]++
			}
		}
	}
	out := map[string][]int{}
	for w, counts := range before {
		for ty, c := range counts {
			if c >= cfg.TriggerMin && float64(c) >= cfg.TriggerPrecision*float64(total[w]) {
				out[w] = append(out[w], ty)
			}
		}
	}
	return out
}

// TagOptions tune one tagging run.
type TagOptions struct {
	// Workers tags documents in parallel; 0 means GOMAXPROCS.
	Workers int
	// NoPostProcess skips trimming, trusted templates and trusted-term
	// propagation (the "before post-processing" column of Yang's Table 7).
	NoPostProcess bool
	// RecallBias, when not nil, replaces the model's configured bias.
	RecallBias map[string]float64
	// Point is the decision rule ("" is Balanced). At Privacy, TargetRecall
	// asks for a recall other than the calibrated one, and Threshold, when
	// positive, sets the rule's threshold outright (calibration's sweep).
	Point        OperatingPoint
	TargetRecall float64
	Threshold    float64
	// Nets are the safety nets run after the model at the privacy point;
	// nil runs those the model was calibrated with.
	Nets *Nets
}

// Tag annotates documents and returns copies whose Spans are the model's
// predictions (the input is left untouched). Documents sharing a Patient are
// one patient's records: trusted terms found in one are looked for in all.
// At the privacy point a model without calibration fails with
// ErrNotCalibrated.
func (m *Model) Tag(ctx context.Context, docs []pipeline.Document, opt TagOptions) ([]pipeline.Document, error) {
	out, _, err := m.TagReport(ctx, docs, opt)
	return out, err
}

// TagReport is Tag that also says what each safety net added.
func (m *Model) TagReport(ctx context.Context, docs []pipeline.Document, opt TagOptions) ([]pipeline.Document, NetReport, error) {
	privacy := opt.Point == Privacy
	if privacy && opt.Threshold <= 0 {
		t, err := m.PrivacyThreshold(opt.TargetRecall, "MODEL")
		if err != nil {
			return nil, NetReport{}, err
		}
		opt.Threshold = t
	}
	tagged, err := m.tagAll(ctx, docs, opt, privacy)
	if err != nil {
		return nil, NetReport{}, err
	}
	var rep NetReport
	if privacy {
		for _, td := range tagged {
			m.privacyPass(td, opt.Threshold)
		}
		var nets Nets
		if m.Meta.Calibration != nil {
			nets = m.Meta.Calibration.Nets
		}
		if opt.Nets != nil {
			nets = *opt.Nets
		}
		rep = m.applyNets(docs, tagged, nets)
	}
	out := make([]pipeline.Document, len(docs))
	for i := range docs {
		out[i] = docs[i]
		out[i].Spans = tagged[i].spans()
	}
	return out, rep, nil
}

// tagAll tags docs at the balanced point; with scores, it also keeps each
// token's marginal probability of O and likeliest type.
func (m *Model) tagAll(ctx context.Context, docs []pipeline.Document, opt TagOptions, scores bool) ([]*taggedDoc, error) {
	bias := m.biasVector(m.Config.RecallBias)
	if opt.RecallBias != nil {
		bias = m.biasVector(opt.RecallBias)
	}
	var tr *transitions
	if scores {
		tr = newTransitions(m.crf.w[m.crf.nState():], m.crf.L)
	}
	tagged := make([]*taggedDoc, len(docs))
	err := eachDocument(ctx, len(docs), opt.Workers, func(i int, tg *tagScratch) {
		tagged[i] = m.tagOne(&docs[i], bias, tg, !opt.NoPostProcess, tr)
	})
	if err != nil {
		return nil, err
	}
	if !opt.NoPostProcess {
		m.propagate(docs, tagged)
		for _, td := range tagged {
			m.retype(td)
		}
	}
	return tagged, nil
}

// biasVector expands per-type biases to per-label ones.
func (m *Model) biasVector(b map[string]float64) []float64 {
	if len(b) == 0 {
		return nil
	}
	v := make([]float64, m.labels.N())
	for k, t := range m.Types {
		bias, ok := b[t.Type]
		if !ok {
			bias = b["*"]
		}
		v[1+2*k], v[2+2*k] = bias, bias
	}
	return v
}

// eachDocument calls do for documents 0 to n-1 on workers goroutines (0:
// GOMAXPROCS), each with scratch buffers of its own, until ctx ends.
func eachDocument(ctx context.Context, n, workers int, do func(i int, tg *tagScratch)) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tg tagScratch
			for i := range next {
				do(i, &tg)
			}
		}()
	}
	var err error
	for i := range n {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return err
}

// tagScratch is one worker's reusable buffers.
type tagScratch struct {
	buf     []byte
	score   []float64
	back    []int32
	words   wordCache
	phrases phraseMemo
	ws      *workspace // forward-backward's, for Uncertainty
}

// taggedDoc is one document during tagging: its tokens and current spans in
// byte offsets, so that post-processing need not convert back and forth.
type taggedDoc struct {
	doc   *pipeline.Document
	tk    *Tokens
	ix    *pipeline.Index
	model *Model
	pred  []tokSpan
	// matches are the templates' matches (docFeatures.matches), kept for
	// the retyping that follows propagation.
	matches [][][2]int
	// pO and pType are each token's probability of O and likeliest PHI
	// type (an index into Model.Types), for the privacy point.
	pO    []float32
	pType []int32
}

// tokSpan is a predicted span over tokens [first, last) of type typ (an
// index into Model.Types).
type tokSpan struct {
	first, last int
	typ         int
}

func (td *taggedDoc) spans() []pipeline.Span {
	sort.Slice(td.pred, func(i, j int) bool { return td.pred[i].first < td.pred[j].first })
	out := make([]pipeline.Span, 0, len(td.pred))
	for _, p := range td.pred {
		out = append(out, td.model.labels.span(td.tk, td.ix, p.first, p.last, p.typ))
	}
	return out
}

// sequenceOf maps a prepared document's attributes to the model's ids;
// attributes unseen in training are dropped, as CRFsuite drops them. They
// come in emit's order; those a word alone decides come from the cache.
func (m *Model) sequenceOf(x *extractor, d *docFeatures, c *wordCache, buf []byte) (sequence, []byte) {
	n := len(d.tk.Tokens)
	s := sequence{off: make([]int32, 1, n+1), attrs: make([]int32, 0, n*32)}
	lookup := func(b []byte) {
		if id, ok := m.attrIndex[string(b)]; ok {
			s.attrs = append(s.attrs, id)
		}
	}
	c.begin(x)
	words := make([]int32, n)
	for t := range n {
		words[t], buf = c.entry(m, x, d, t, buf)
	}
	W := x.cfg.Window
	for t := range n {
		s.attrs = append(s.attrs, c.part(words[t], 0)...)
		for k := 1; k <= W; k++ {
			if t-k >= 0 {
				s.attrs = append(s.attrs, c.part(words[t-k], k)...)
			} else {
				buf = emitEdge(-k, buf, lookup)
			}
			if t+k < n {
				s.attrs = append(s.attrs, c.part(words[t+k], W+k)...)
			} else {
				buf = emitEdge(k, buf, lookup)
			}
		}
		buf = x.emitContext(d, t, buf, lookup)
		s.off = append(s.off, int32(len(s.attrs)))
	}
	return s, buf
}

// wordCacheWords bounds a wordCache: past it, the next document starts it
// again.
const wordCacheWords = 1 << 16

// wordCache keeps, per distinct word, the model's ids of the attributes the
// word alone decides (emitWord, and emitNeighbour at each distance), so
// that tagging looks them up once per word rather than once per token: they
// are about half of a token's attributes. One per tagging worker and model.
type wordCache struct {
	index map[string]int32 // word -> entry
	// Entry e's ids for part p are ids[off[e*parts+p]:off[e*parts+p+1]];
	// part 0 is the word's own attributes, part k (1 to Window) those it
	// gives the token k places after it, part Window+k those it gives the
	// token k places before it.
	ids   []int32
	off   []int32
	parts int
	max   int // words kept before starting again; 0 for wordCacheWords
}

// begin readies the cache for a document: entries stay valid until the next
// begin.
func (c *wordCache) begin(x *extractor) {
	if c.index == nil || len(c.index) >= cmp.Or(c.max, wordCacheWords) {
		c.index, c.ids, c.off, c.parts = make(map[string]int32), c.ids[:0], append(c.off[:0], 0), 1+2*x.cfg.Window
	}
}

// entry returns the cache entry of token i's word, made on first sight.
func (c *wordCache) entry(m *Model, x *extractor, d *docFeatures, i int, buf []byte) (int32, []byte) {
	w := d.tk.Word(i)
	if e, ok := c.index[w]; ok {
		return e, buf
	}
	collect := func(b []byte) {
		if id, ok := m.attrIndex[string(b)]; ok {
			c.ids = append(c.ids, id)
		}
	}
	buf = x.emitWord(d, i, buf, collect)
	c.off = append(c.off, int32(len(c.ids)))
	for _, dir := range [2]int{-1, 1} {
		for k := 1; k <= x.cfg.Window; k++ {
			buf = x.emitNeighbour(d, i, dir*k, buf, collect)
			c.off = append(c.off, int32(len(c.ids)))
		}
	}
	e := int32(len(c.index))
	c.index[strings.Clone(w)] = e // a substring would keep the whole text alive
	return e, buf
}

// part returns entry e's ids for part p.
func (c *wordCache) part(e int32, p int) []int32 {
	i := int(e)*c.parts + p
	return c.ids[c.off[i]:c.off[i+1]]
}

// tagOne tags one document; with tr, it also scores its tokens for the
// privacy point from the marginals of the same sequence.
func (m *Model) tagOne(doc *pipeline.Document, bias []float64, tg *tagScratch, post bool, tr *transitions) *taggedDoc {
	tk := Tokenize(doc.Text)
	td := &taggedDoc{doc: doc, tk: tk, ix: pipeline.NewIndex(doc.Text), model: m}
	df := m.ext.prepare(tk, &tg.phrases)
	var s sequence
	s, tg.buf = m.sequenceOf(m.ext, df, &tg.words, tg.buf)
	n := len(tk.Tokens) * m.crf.L
	if cap(tg.score) < n {
		tg.score, tg.back = make([]float64, n), make([]int32, n)
	}
	td.pred = bioSpans(m.crf.viterbi(&s, bias, tg.score[:n], tg.back[:n]))
	if tr != nil {
		if tg.ws == nil {
			tg.ws = newWorkspace(0, m.crf.L)
		}
		td.scorePrivacy(m.crf.marginals(&s, tr, tg.ws), m.crf.L)
	}
	m.applyRules(td)
	m.applyAttributions(td)
	if post {
		m.trim(td)
		m.applyTemplates(td, df.matches)
		td.matches = df.matches
	}
	return td
}
