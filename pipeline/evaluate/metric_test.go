package evaluate

import (
	"bytes"
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

func TestMetricOf(t *testing.T) {
	doc := func(types ...string) []pipeline.Document {
		var spans []pipeline.Span
		for _, ty := range types {
			spans = append(spans, pipeline.Span{Type: ty})
		}
		return []pipeline.Document{{ID: "d", Spans: spans}}
	}
	for _, c := range []struct {
		gold []pipeline.Document
		want Metric
	}{
		{doc("HOSPITAL", "CALLE"), MetricMeddocan},
		{doc("HOSPITAL"), MetricI2B2}, // both tag sets have it
		{doc("CALLE", "DOCTOR"), MetricI2B2},
		{doc("CUSTOM"), MetricI2B2},
		{nil, MetricI2B2},
	} {
		if got := MetricOf(c.gold); got != c.want {
			t.Errorf("MetricOf(%v): %s, want %s", c.gold[0].Spans, got, c.want)
		}
	}
	if MetricFor("meddocan") != MetricMeddocan || MetricFor("i2b2-2014") != MetricI2B2 || MetricFor("open") != MetricI2B2 {
		t.Error("MetricFor")
	}
}

// The confusion matrix names every type in full, however long, and its
// columns stay as narrow as their counts.
func TestRenderConfusionKeepsLongTypes(t *testing.T) {
	types := []string{"IDENTIF_VEHICULOS_NRSERIE_PLACAS", "ID_TITULACION_PERSONAL_SANITARIO", "PAIS"}
	c := Confusion{Types: types, Cells: [][]int{{3, 0, 0, 1}, {0, 12, 0, 0}, {0, 0, 1234, 0}, {1, 0, 0, 0}}}
	var b bytes.Buffer
	renderConfusion(&b, c)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for i, ty := range types {
		if !strings.Contains(lines[2+i], " "+ty+" ") {
			t.Errorf("row %d lacks %s: %q", i+1, ty, lines[2+i])
		}
	}
	for _, l := range lines[1:] {
		if len(l) != len(lines[1]) || len(l) > len(types[1])+4+3*5+len(Missing)+2 {
			t.Errorf("row not aligned or too wide (%d): %q", len(l), l)
		}
	}
	if !strings.HasSuffix(lines[4], " 1234       0") || !strings.HasPrefix(lines[5], "   SPURIOUS ") {
		t.Errorf("cells:\n%s", b.String())
	}
}
