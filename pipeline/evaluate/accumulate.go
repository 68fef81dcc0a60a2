package evaluate

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

// Accumulator scores a corpus a batch of documents at a time and ends with
// the Report Evaluate gives for all of them at once, figure for figure. Each
// document's gold and system sides must come in the same batch (a corpus
// read a batch of patients at a time gives both); batches may come in any
// order.
//
// What it holds does not grow with the documents' text or spans: pooled
// counts, and for the macro averages of the i2b2 measures each document's id
// and its match counts per label, varint-packed (about 170 bytes a
// synthetic note with its id: 18 MB for 105,052 notes). The macro averages are numpy's pairwise sums over the documents in
// id order, which no running sum reproduces to the bit, so the counts are
// replayed in that order at the end (twice: mean, then deviations).
type Accumulator struct {
	opt    Options
	labels *labelSet
	hipaa  map[string]bool

	// The i2b2 metric: each pair's record (see addRecord) and per-label
	// totals for the per-type scores.
	docs    []docRecord
	records []byte
	byLabel [][3]Counts // token, strict, relaxed
	cells   cellScratch
	all, hp []bool // every label; HIPAA labels (binary scopes)

	med meddocanCounts
	ov  *overlapTally
	an  *analyzer

	goldOnly, systemOnly []string
}

// docRecord is one paired document: its id and where its counts start.
type docRecord struct {
	id  string
	off int
}

// NewAccumulator starts an evaluation with Evaluate's options.
func NewAccumulator(opt Options) (*Accumulator, error) {
	if opt.Metric == "" {
		opt.Metric = MetricI2B2
	}
	if !slices.Contains(Metrics(), opt.Metric) {
		return nil, inputErrorf("unknown metric %q (known: i2b2, meddocan, physionet)", opt.Metric)
	}
	a := &Accumulator{opt: opt, hipaa: hipaaSet(opt.PaperHIPAA), labels: &labelSet{index: map[[2]string]int32{}}, ov: newOverlapTally()}
	var keep func(pipeline.Span) bool
	if opt.HIPAAOnly {
		keep = func(s pipeline.Span) bool { return a.hipaa[s.Type] }
	}
	a.an = newAnalyzer(keep, !opt.Summary)
	return a, nil
}

// Add scores one batch of gold and system documents, paired by ID. After an
// error the accumulator is spent.
func (a *Accumulator) Add(gold, system []pipeline.Document) error {
	pairs, goldOnly, systemOnly, err := PairDocuments(gold, system)
	if err != nil {
		return err
	}
	for _, id := range goldOnly {
		a.goldOnly = append(a.goldOnly, strings.Clone(id))
	}
	for _, id := range systemOnly {
		a.systemOnly = append(a.systemOnly, strings.Clone(id))
	}
	for _, p := range pairs {
		for _, d := range [2]*pipeline.Document{p.Gold, p.System} {
			for _, s := range d.Spans {
				a.labels.intern(s.Category, s.Type, a.hipaa)
			}
		}
	}
	for len(a.byLabel) < len(a.labels.groups) {
		g := a.labels.groups[len(a.byLabel)]
		a.byLabel = append(a.byLabel, [3]Counts{})
		a.all, a.hp = append(a.all, true), append(a.hp, g.HIPAA)
	}
	for _, p := range pairs {
		a.docs = append(a.docs, docRecord{id: strings.Clone(p.ID), off: len(a.records)})
		if a.opt.Metric == MetricI2B2 {
			if err := a.addRecord(p); err != nil {
				return err
			}
		}
	}
	switch a.opt.Metric {
	case MetricMeddocan:
		a.med.add(pairs)
	case MetricPhysioNet:
		a.ov.add(gold, system)
	}
	a.an.add(pairs)
	return nil
}

// binaryScopes are the label-blind evaluations I2B2Specs holds, in the
// order a record keeps their counts.
var binaryScopes = [4]struct {
	mode  Mode
	hipaa bool
}{{Token, false}, {Strict, false}, {Token, true}, {Strict, true}}

// addRecord scores one pair and appends its record: the number of labels
// with any count, then per label its id and its token (TP, FP, FN), strict
// (TP, FP, FN) and relaxed (four) cells, then the TP, FP and FN of each
// binaryScopes evaluation; all as uvarints.
func (a *Accumulator) addRecord(p Pair) error {
	ls := a.labels
	spans := [2][]item{ls.spanItems(p.Gold), ls.spanItems(p.System)}
	tokens, err := ls.pairTokens(p)
	if err != nil {
		return err
	}
	cs := &a.cells
	cs.fill(len(ls.groups), spans, tokens, true, true, true)
	var present []int
	for g := range ls.groups {
		if cs.tok[g] != (cell{}) || cs.strict[g] != (cell{}) || cs.rel[g] != (cell{}) {
			present = append(present, g)
		}
	}
	put := func(v int32) { a.records = binary.AppendUvarint(a.records, uint64(v)) }
	put(int32(len(present)))
	for _, g := range present {
		t, s, r := cs.tok[g], cs.strict[g], cs.rel[g]
		for _, v := range [...]int32{int32(g), t.a, t.b, t.c, s.a, s.b, s.c, r.a, r.b, r.c, r.d} {
			put(v)
		}
		tot := &a.byLabel[g]
		tot[0], tot[1], tot[2] = tot[0].Add(t.counts(Token)), tot[1].Add(s.counts(Strict)), tot[2].Add(r.counts(Relaxed))
	}
	for _, b := range binaryScopes {
		in := a.all
		if b.hipaa {
			in = a.hp
		}
		items := spans
		if b.mode == Token {
			items = tokens
		}
		c := binaryCounts(items[0], items[1], in, cs.bufG, cs.bufS)
		put(int32(c.TP))
		put(int32(c.FP))
		put(int32(c.FN))
	}
	return nil
}

// decodedRecord is one record read back.
type decodedRecord struct {
	labels []int32
	cells  [][3]cell // token, strict, relaxed per label
	binary [len(binaryScopes)]Counts
}

func (d *decodedRecord) read(data []byte) {
	get := func() int32 {
		v, n := binary.Uvarint(data)
		data = data[n:]
		return int32(v)
	}
	k := int(get())
	d.labels, d.cells = d.labels[:0], d.cells[:0]
	for range k {
		d.labels = append(d.labels, get())
		var c [3]cell
		c[0] = cell{get(), get(), get(), 0}
		c[1] = cell{get(), get(), get(), 0}
		c[2] = cell{get(), get(), get(), get()}
		d.cells = append(d.cells, c)
	}
	for i := range d.binary {
		d.binary[i] = Counts{TP: int(get()), FP: int(get()), FN: int(get())}
	}
}

// Report ends the evaluation (call it once): the report Evaluate gives for
// every document added. With Options.Summary it leaves out the per-document scores and the
// error instances.
func (a *Accumulator) Report() (*Report, error) {
	slices.Sort(a.goldOnly)
	slices.Sort(a.systemOnly)
	if err := a.checkIDs(); err != nil {
		return nil, err
	}
	opt := a.opt
	r := &Report{Metric: opt.Metric, HIPAAList: HIPAAScript, HIPAATypes: phi.SortedKeys(a.hipaa), HIPAAOnly: opt.HIPAAOnly,
		Documents: len(a.docs), GoldOnly: a.goldOnly, SystemOnly: a.systemOnly}
	if opt.PaperHIPAA {
		r.HIPAAList = HIPAAPaper
	}
	groups := a.labels.sorted()
	switch opt.Metric {
	case MetricI2B2:
		r.Measures = a.measures(I2B2Specs(a.labels.categories()))
		for _, g := range groups {
			if opt.HIPAAOnly && !g.HIPAA {
				continue
			}
			t := a.byLabel[a.labels.index[[2]string{g.Category, g.Type}]]
			r.PerType = append(r.PerType, TypeScores{Category: g.Category, Type: g.Type, HIPAA: g.HIPAA,
				Token: scoreOf(t[0]), Strict: scoreOf(t[1]), Relaxed: scoreOf(t[2])})
		}
	case MetricMeddocan:
		m := a.med.scores()
		r.Meddocan = &m
	case MetricPhysioNet:
		o := a.ov.scores()
		r.Overlap = &o
	}
	var order []string
	for _, g := range groups {
		if !opt.HIPAAOnly || g.HIPAA {
			order = append(order, g.Type)
		}
	}
	r.Confusion, r.Errors, r.Accuracy = a.an.finish(order)
	return r, nil
}

// checkIDs finds what pairing all the documents at once would have refused
// or paired differently: an id twice on one side across batches, or a
// document whose two sides came in different batches.
func (a *Accumulator) checkIDs() error {
	slices.SortFunc(a.docs, func(x, y docRecord) int { return strings.Compare(x.id, y.id) })
	ids := make([]string, len(a.docs))
	for i, d := range a.docs {
		ids[i] = d.id
	}
	twice := func(side string, ids []string) error {
		slices.Sort(ids)
		for i := 1; i < len(ids); i++ {
			if ids[i] == ids[i-1] {
				return inputErrorf("%s document id %q occurs twice", side, ids[i])
			}
		}
		return nil
	}
	if err := twice("gold", append(slices.Clip(ids), a.goldOnly...)); err != nil {
		return err
	}
	if err := twice("system", append(slices.Clip(ids), a.systemOnly...)); err != nil {
		return err
	}
	for _, id := range a.goldOnly {
		if _, split := slices.BinarySearch(a.systemOnly, id); split {
			return inputErrorf("document %s: its gold and system sides came in different batches", id)
		}
	}
	return nil
}

// measures computes specs over the records in id order: counts and micro
// scores, and numpy's macro mean and standard deviation of the documents'
// precision and recall, streamed along the pairwise plan in two passes.
func (a *Accumulator) measures(specs []Spec) []Measure {
	n := len(a.docs)
	out := make([]Measure, len(specs))
	scopes := make([][]bool, len(specs))
	binaryOf, modeOf := make([]int, len(specs)), make([]int, len(specs))
	for i, sp := range specs {
		modeOf[i] = slices.Index([]Mode{Token, Strict, Relaxed}, sp.Mode)
		out[i] = Measure{Spec: sp, Documents: n}
		if !a.opt.Summary {
			out[i].PerDocument = make([]DocScore, 0, n)
		}
		scopes[i] = a.labels.scope(sp)
		binaryOf[i] = -1
		if sp.Binary { // I2B2Specs scopes its label-blind ones by HIPAA alone
			binaryOf[i] = slices.Index(binaryScopes[:], struct {
				mode  Mode
				hipaa bool
			}{sp.Mode, sp.HIPAA})
		}
	}
	var rec decodedRecord
	each := func(fn func(spec, doc int, c Counts)) {
		for d, doc := range a.docs {
			rec.read(a.records[doc.off:])
			for i, sp := range specs {
				if b := binaryOf[i]; b >= 0 {
					fn(i, d, rec.binary[b])
					continue
				}
				var sum cell
				for k, g := range rec.labels {
					if scopes[i][g] {
						sum = sum.add(rec.cells[k][modeOf[i]])
					}
				}
				fn(i, d, sum.counts(sp.Mode))
			}
		}
	}
	plan := pairwisePlan(n)
	streams := func() (ps, rs []*pairwiseStream) {
		for range specs {
			ps, rs = append(ps, newPairwiseStream(plan)), append(rs, newPairwiseStream(plan))
		}
		return ps, rs
	}
	ps, rs := streams()
	each(func(i, d int, c Counts) {
		m := &out[i]
		p, r := c.Precision(), c.Recall()
		ps[i].add(p)
		rs[i].add(r)
		m.Counts = m.Counts.Add(c)
		if !a.opt.Summary {
			m.PerDocument = append(m.PerDocument, DocScore{ID: a.docs[d].id, Counts: c, Precision: p, Recall: r, F1: fscore(p, r)})
		}
	})
	if n == 0 {
		for i := range out {
			out[i].finish(0, 0, 0, 0)
		}
		return out
	}
	meanP, meanR := make([]float64, len(specs)), make([]float64, len(specs))
	for i := range specs {
		meanP[i], meanR[i] = ps[i].sum()/float64(n), rs[i].sum()/float64(n)
	}
	ps, rs = streams()
	each(func(i, _ int, c Counts) {
		dp, dr := c.Precision()-meanP[i], c.Recall()-meanR[i]
		ps[i].add(dp * dp)
		rs[i].add(dr * dr)
	})
	for i := range out {
		out[i].finish(meanP[i], math.Sqrt(ps[i].sum()/float64(n)), meanR[i], math.Sqrt(rs[i].sum()/float64(n)))
	}
	return out
}

// finish fills in a measure's scores from its counts and macro figures.
func (m *Measure) finish(macroP, macroPSD, macroR, macroRSD float64) {
	m.MicroPrecision, m.MicroRecall, m.MicroF1 = m.Counts.Precision(), m.Counts.Recall(), m.Counts.F1()
	m.MacroPrecision, m.MacroPrecisionSD = macroP, macroPSD
	m.MacroRecall, m.MacroRecallSD = macroR, macroRSD
	m.MacroF1 = fscore(m.MacroPrecision, m.MacroRecall)
}
