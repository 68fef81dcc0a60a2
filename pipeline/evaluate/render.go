package evaluate

import (
	"fmt"
	"io"
	"strings"
)

// The i2b2 script prints with Python's "{:<25}{:<15}{:<15}{:<20}": columns
// padded on the right and never cut, so a long heading pushes the next column
// over ("NAME Binary HIPAA Strict (15)Measure").
func row(w io.Writer, a, b, c, d string) {
	fmt.Fprintf(w, "%-25s%-15s%-15s%-20s\n", a, b, c, d)
}

const rule = "---------------------------------------------------------------------------" // 25+15+15+20

// RenderI2B2 writes measures in the layout of the official i2b2 2014
// script's output: a summary block per measure and, with verbose (the
// script's -v), each document's precision, recall and F1 before it, headed
// "[gold(tp)system]" with the document's TP+FN, TP and TP+FP. Documents come
// in ID order (the script's order is Python's set order).
func RenderI2B2(w io.Writer, measures []Measure, verbose bool) error {
	ew := &errWriter{w: w}
	for _, m := range measures {
		if verbose {
			fmt.Fprintf(ew, "Report for %s:\n", m.Label)
			row(ew, "", "Measure", "", "Micro (Primary)")
			fmt.Fprintln(ew, rule)
			for _, d := range m.PerDocument {
				row(ew, d.ID, "Precision", "", pyFormat(d.Precision, 4))
				row(ew, fmt.Sprintf("[%d(%d)%d]", d.TP+d.FN, d.TP, d.TP+d.FP), "Recall", "", pyFormat(d.Recall, 4))
				row(ew, "", "F1", "", pyFormat(d.F1, 4))
				fmt.Fprintln(ew, rule)
			}
		}
		row(ew, fmt.Sprintf("%s (%d)", m.Label, m.Documents), "Measure", "Macro (SD)", "Micro (Primary)")
		fmt.Fprintln(ew, rule)
		row(ew, "Total", "Precision", pyFormat(m.MacroPrecision, 4)+" ("+pyFormat(m.MacroPrecisionSD, 2)+")", pyFormat(m.MicroPrecision, 4))
		row(ew, "", "Recall", pyFormat(m.MacroRecall, 4)+" ("+pyFormat(m.MacroRecallSD, 2)+")", pyFormat(m.MicroRecall, 4))
		macroF1 := pyFormat(m.MacroF1, 4)
		if m.MacroPrecision+m.MacroRecall == 0 {
			macroF1 = "nan" // numpy's 0/0, which the script prints
		}
		row(ew, "", "F1", macroF1, pyFormat(m.MicroF1, 4))
		fmt.Fprint(ew, "\n\n") // Python's print("\n") after the row
	}
	return ew.err
}

// errWriter keeps the first write error so renderers can check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	_, e.err = e.w.Write(p)
	return len(p), nil
}

// pad is a helper for the analysis tables: s left-aligned in width.
func pad(s string, width int) string {
	if len(s) >= width {
		return s + " "
	}
	return s + strings.Repeat(" ", width-len(s))
}
