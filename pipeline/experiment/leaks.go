package experiment

import (
	"cmp"
	"fmt"
	"unicode"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/surrogate"
)

// DirectIdentifier says whether a value of this category and type names a
// person directly (a name, an id, a contact, a street or a date): a note
// that leaks one is the worst kind of leak, counted apart.
func DirectIdentifier(category, typ string) bool {
	switch category {
	case "NAME", "ID", "CONTACT", "DATE":
		return true
	}
	return typ == "CALLE" || typ == "STREET"
}

// Leaks resynthesizes a system annotation of the gold notes with pol and
// seed, as a release would be made from it, and counts what it leaks (the
// residual figures of ResidualRisk, without the attacks that train
// taggers): what calibration measures at each operating point.
func Leaks(gold, system []pipeline.Document, pol *surrogate.Policy, opt RiskOptions) (Residual, error) {
	if len(system) != len(gold) {
		return Residual{}, fmt.Errorf("experiment: %d gold and %d system documents: want one of each per note", len(gold), len(system))
	}
	opt.Bootstrap = cmp.Or(opt.Bootstrap, 1000)
	if opt.Confidence <= 0 || opt.Confidence >= 1 {
		opt.Confidence = 0.95
	}
	opt.CorpusDocuments = cmp.Or(opt.CorpusDocuments, 1_000_000)
	released, err := surrogate.New(pol, nil, opt.Seed).Run(system, surrogate.Store{})
	if err != nil {
		return Residual{}, err
	}
	goldReleased, err := surrogate.New(pol, nil, opt.Seed).Run(gold, surrogate.Store{})
	if err != nil {
		return Residual{}, err
	}
	props := map[string][]surrogate.Propagation{}
	for _, p := range released.Propagated {
		props[p.Doc] = append(props[p.Doc], p)
	}
	carried := make([][]Carried, len(gold))
	for i, g := range gold {
		c, err := CarryGold(g, system[i], released.Docs[i], props[released.Docs[i].ID])
		if err != nil {
			return Residual{}, err
		}
		if err := markKept(c, g, goldReleased.Docs[i]); err != nil {
			return Residual{}, err
		}
		carried[i] = c
	}
	r := residual(gold, carried, opt)
	r.systemFigures(gold, system)
	return r, nil
}

// systemFigures fills the system's span precision and character recall.
func (r *Residual) systemFigures(gold, system []pipeline.Document) {
	r.CharRecall, r.SpanPrecision, r.SystemSpans = CharRecallPrecision(gold, system)
}

// CharRecallPrecision returns the share of the gold spans' letters and
// digits that some system span covers, the share of system spans that
// touch a gold span, and the number of system spans (documents in the same
// order, code-point offsets).
func CharRecallPrecision(gold, system []pipeline.Document) (recall, precision float64, spans int) {
	var phi, covered, touching int
	for i, g := range gold {
		text := []rune(g.Text)
		in := make([]bool, len(text))
		for _, s := range system[i].Spans {
			for p := max(s.Start, 0); p < min(s.End, len(text)); p++ {
				in[p] = true
			}
			spans++
			if overlapsAny(g.Spans, s.Start, s.End) {
				touching++
			}
		}
		for _, s := range g.Spans {
			for p := max(s.Start, 0); p < min(s.End, len(text)); p++ {
				if unicode.IsLetter(text[p]) || unicode.IsDigit(text[p]) {
					phi++
					if in[p] {
						covered++
					}
				}
			}
		}
	}
	return ratio(covered, phi), ratio(touching, spans), spans
}
