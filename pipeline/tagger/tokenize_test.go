package tagger

import (
	"strings"
	"testing"
	"unicode/utf8"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

func words(t *Tokens) []string {
	out := make([]string, len(t.Tokens))
	for i := range t.Tokens {
		out[i] = t.Word(i)
	}
	return out
}

func TestTokenizeSplitsGluedPHI(t *testing.T) {
	cases := map[string]string{
		"70yoM":                 "70 yo M",
		"3041023MARY":           "3041023 MARY",
		"T-Th-Sa":               "T - Th - Sa",
		"TThSa":                 "T Th Sa",
		"Dr. Núñez, 03/03/1946": "Dr . Núñez , 03 / 03 / 1946",
		"MR:6746781":            "MR : 6746781",
		"nnavcu@hotmail.com":    "nnavcu @ hotmail . com",
		"\ufeffAna Pérez":       "Ana Pérez",
		"Ana\ufeffPérez":        "Ana Pérez",
	}
	for in, want := range cases {
		if got := strings.Join(words(Tokenize(in)), " "); got != want {
			t.Errorf("Tokenize(%q) = %q, want %q", in, got, want)
		}
	}
	// A byte-order mark leaves the first token as it would be without it.
	with, without := Tokenize("\ufeffAna Pérez"), Tokenize("Ana Pérez")
	if with.Tokens[0].Flags != without.Tokens[0].Flags {
		t.Errorf("first token's flags %v after a byte-order mark, %v without", with.Tokens[0].Flags, without.Tokens[0].Flags)
	}
}

func TestTokenizeLines(t *testing.T) {
	text := "Datos del paciente.\nNombre:  Ernesto.\nApellidos:\nRivera Bueno.\n\nINFORME CLINICO\nVino ayer. Se fue hoy."
	tk := Tokenize(text)
	if len(tk.Lines) != 6 {
		t.Fatalf("got %d lines, want 6", len(tk.Lines))
	}
	wantKey := []string{"", "nombre", "apellidos", "apellidos", "", ""}
	wantSection := []string{"datos del paciente", "datos del paciente", "datos del paciente", "datos del paciente", "informe clinico", "informe clinico"}
	for i, ln := range tk.Lines {
		if ln.Key != wantKey[i] || ln.Section != wantSection[i] {
			t.Errorf("line %d: key %q section %q, want %q %q", i, ln.Key, ln.Section, wantKey[i], wantSection[i])
		}
	}
	var sents, blanks []string
	for i, tok := range tk.Tokens {
		if tok.Flags&SentStart != 0 {
			sents = append(sents, tk.Word(i))
		}
		if tok.Flags&BlankBefore != 0 {
			blanks = append(blanks, tk.Word(i))
		}
	}
	if got := strings.Join(sents, " "); got != "Datos Nombre Apellidos Rivera INFORME Vino Se" {
		t.Errorf("sentence starts %q", got)
	}
	if got := strings.Join(blanks, " "); got != "Datos INFORME" {
		t.Errorf("blank-line starts %q", got)
	}
}

// readMeddocan reads a MEDDOCAN split (train or dev) with its native labels.
func readMeddocan(tb testing.TB, split string) []pipeline.Document {
	tb.Helper()
	dir := shared.Path(tb, "meddocan/corpus/"+split+"/xml")
	files, err := formats.ReadPaths(dir)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := formats.Lookup("i2b2")
	if err != nil {
		tb.Fatal(err)
	}
	docs, err := f.Read(files, formats.ReadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return docs
}

// The tokenizer must not cap the tagger: gold spans mapped to BIO token labels
// and back must come out (almost) unchanged.
func TestTokenizerKeepsGoldSpans(t *testing.T) {
	for _, split := range []string{"train", "dev"} {
		docs := readMeddocan(t, split)
		labels := labelsOf(docs)
		total, kept := 0, 0
		for _, d := range docs {
			ix := pipeline.NewIndex(d.Text)
			tk := Tokenize(d.Text)
			got := map[[2]int]string{}
			for _, s := range labels.decode(tk, ix, labels.encode(tk, ix, d.Spans)) {
				got[[2]int{s.Start, s.End}] = s.Type
			}
			for _, s := range d.Spans {
				total++
				if got[[2]int{s.Start, s.End}] == s.Type {
					kept++
				} else {
					t.Logf("%s: %s %q [%d:%d] lost", d.ID, s.Type, s.Text, s.Start, s.End)
				}
			}
		}
		frac := float64(kept) / float64(total)
		t.Logf("%s: %d of %d gold spans survive tokenization (%.4f)", split, kept, total, frac)
		if frac < 0.999 {
			t.Errorf("%s: only %.4f of gold spans survive tokenization, want >= 0.999", split, frac)
		}
	}
}

// Tokens are in order, non-empty, inside the text, never hold whitespace and,
// joined, give back the text without its whitespace; every token belongs to
// the line that lists it.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"70yoM", "Nombre:  Ernesto.\nEdad: 70 años", "T-Th-Sa\n\nHTMLParser ÁÉÍ 3041023MARY", "\xff\xfe a", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tk := Tokenize(text)
		var joined strings.Builder
		prev := 0
		for i, tok := range tk.Tokens {
			if tok.Start < prev || tok.End <= tok.Start || tok.End > len(text) {
				t.Fatalf("token %d [%d:%d] out of order or empty", i, tok.Start, tok.End)
			}
			if strings.ContainsAny(tk.Word(i), " \t\n\r") {
				t.Fatalf("token %d %q holds whitespace", i, tk.Word(i))
			}
			ln := tk.Lines[tok.Line]
			if i < ln.First || i >= ln.Last {
				t.Fatalf("token %d not in its line %+v", i, ln)
			}
			joined.WriteString(tk.Word(i))
			prev = tok.End
		}
		var want strings.Builder
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			if c := classify(r); c != clSpace && c != clNewline {
				want.WriteString(text[i : i+size])
			}
			i += size
		}
		if joined.String() != want.String() {
			t.Fatalf("tokens join to %q, want %q", joined.String(), want.String())
		}
	})
}
