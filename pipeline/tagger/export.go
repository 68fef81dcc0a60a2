package tagger

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"deidcorpus/pipeline"
)

// WriteCRFsuite writes the features Train would generate for docs under cfg
// in CRFsuite's text format: one line per token, the BIO label then the
// attributes separated by tabs, a blank line after each document. Attribute
// names escape ':' and '\' as CRFsuite expects ("\:" and "\\"). Running
// crfsuite learn on the file trains on exactly this package's features.
func WriteCRFsuite(ctx context.Context, w io.Writer, docs []pipeline.Document, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if len(docs) == 0 {
		return fmt.Errorf("%w: no documents to export", ErrInput)
	}
	m := &Model{Config: cfg}
	ts, err := m.prepareTraining(docs)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	esc := strings.NewReplacer(`\`, `\\`, ":", `\:`)
	var buf []byte
	for i := range docs {
		if err := ctx.Err(); err != nil {
			return err
		}
		line := -1
		buf = m.trainingAttributes(ts, i, buf, func(t int, attr []byte) {
			if t != line {
				if line >= 0 {
					bw.WriteByte('\n')
				}
				line = t
				bw.WriteString(m.labels.Name(ts.ys[i][t]))
			}
			bw.WriteByte('\t')
			esc.WriteString(bw, string(attr))
		})
		if line >= 0 {
			bw.WriteByte('\n')
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
