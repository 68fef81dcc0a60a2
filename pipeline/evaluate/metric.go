package evaluate

import (
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

// MetricFor is the headline scorer of an evaluation on a corpus of the named
// tag set: MEDDOCAN's for a MEDDOCAN corpus, whose labels no row of the i2b2
// script's tables has (each would read 0), the i2b2 script's otherwise.
func MetricFor(tagset string) Metric {
	if tagset == phi.MEDDOCANName {
		return MetricMeddocan
	}
	return MetricI2B2
}

// MetricOf is MetricFor of the tag set gold's labels are of, for files that
// declare none: MEDDOCAN's when every label is MEDDOCAN's and one at least is
// not also i2b2's (both have HOSPITAL), else i2b2's.
func MetricOf(gold []pipeline.Document) Metric {
	own := false
	for _, d := range gold {
		for _, s := range d.Spans {
			if _, ok := phi.MEDDOCAN().CategoryOf(s.Type); !ok {
				return MetricFor(phi.I2B22014)
			}
			if _, ok := phi.I2B2().CategoryOf(s.Type); !ok {
				own = true
			}
		}
	}
	if own {
		return MetricFor(phi.MEDDOCANName)
	}
	return MetricFor(phi.I2B22014)
}
