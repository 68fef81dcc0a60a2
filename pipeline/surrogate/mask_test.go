package surrogate

import (
	"regexp"
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

// maskPolicy is the default policy with the rule's strategy and options for
// every type of the notes below, in the scope each has by default.
func maskPolicy(t *testing.T, lang string, rule Rule) *Policy {
	t.Helper()
	pol := DefaultPolicy()
	pol.Language = lang
	for _, typ := range []string{"PATIENT", "DOCTOR", "DATE", "CITY"} {
		r := rule
		r.Scope = pol.Types[typ].Scope
		pol.Types[typ] = r
	}
	if err := pol.Validate(); err != nil {
		t.Fatal(err)
	}
	return pol
}

// englishMaskNote and spanishMaskNote are one patient's note each: the
// Spanish one under MEDDOCAN's labels, which reach the rules through the
// built-in mapping, with accents (code points are not bytes).
func englishMaskNote(t *testing.T) pipeline.Document {
	return noteDoc(t, "en-1", "Mr. Harlan Valdez was seen by Dr. Okafor on 03/16/2091 in Boston; Valdez is well.",
		[2]string{"PATIENT", "Harlan Valdez"}, [2]string{"DOCTOR", "Okafor"}, [2]string{"DATE", "03/16/2091"},
		[2]string{"CITY", "Boston"}, [2]string{"PATIENT", "Valdez"})
}

func spanishMaskNote(t *testing.T) pipeline.Document {
	return noteDoc(t, "es-1", "Paciente: Pilar Gómez Núñez, nacida el 10/10/1963 en Almería. Médico: Dra. Estefanía Romero. Gómez Núñez acude.",
		[2]string{"NOMBRE_SUJETO_ASISTENCIA", "Pilar Gómez Núñez"}, [2]string{"FECHAS", "10/10/1963"},
		[2]string{"TERRITORIO", "Almería"}, [2]string{"NOMBRE_PERSONAL_SANITARIO", "Estefanía Romero"},
		[2]string{"NOMBRE_SUJETO_ASISTENCIA", "Gómez Núñez"})
}

// assertMasked checks a masked note: every span where the text has it, of
// its type, and the check clean, counting every span under the strategy.
func assertMasked(t *testing.T, orig pipeline.Document, res *Result, pol *Policy, strategy string) {
	t.Helper()
	out := res.Docs[0]
	runes := []rune(out.Text)
	for i, s := range out.Spans {
		if s.Start < 0 || s.End > len(runes) || string(runes[s.Start:s.End]) != s.Text {
			t.Errorf("span %d [%d:%d] %q is not the text at its offsets", i, s.Start, s.End, s.Text)
		}
		if s.Type != orig.Spans[i].Type {
			t.Errorf("span %d: type %s, was %s", i, s.Type, orig.Spans[i].Type)
		}
	}
	rep := assertClean(t, []pipeline.Document{orig}, res, pol)
	if !rep.OK() || rep.Strategies[strategy] != len(orig.Spans) {
		t.Errorf("check: ok %v, %v replaced by strategy, want %d by %s", rep.OK(), rep.Strategies, len(orig.Spans), strategy)
	}
}

// Each masking strategy on an English and a Spanish note: the text as the
// strategy writes it, offsets right although the length changes.
func TestMaskStrategies(t *testing.T) {
	hex := `[0-9a-f]{10}`
	for _, c := range []struct {
		rule   Rule
		en, es string // the masked note, a regular expression for hashes
	}{
		{Rule{Strategy: Redact},
			"Mr. ***** was seen by Dr. ***** on ***** in *****; ***** is well.",
			"Paciente: *****, nacida el ***** en *****. Médico: Dra. *****. ***** acude."},
		{Rule{Strategy: Redact, Mask: "X", KeepLength: true},
			"Mr. XXXXXXXXXXXXX was seen by Dr. XXXXXX on XXXXXXXXXX in XXXXXX; XXXXXX is well.",
			"Paciente: XXXXXXXXXXXXXXXXX, nacida el XXXXXXXXXX en XXXXXXX. Médico: Dra. XXXXXXXXXXXXXXXX. XXXXXXXXXXX acude."},
		{Rule{Strategy: Placeholder},
			"Mr. [PATIENT] was seen by Dr. [DOCTOR] on [DATE] in [CITY]; [PATIENT] is well.",
			"Paciente: [NOMBRE_SUJETO_ASISTENCIA], nacida el [FECHAS] en [TERRITORIO]. Médico: Dra. [NOMBRE_PERSONAL_SANITARIO]. [NOMBRE_SUJETO_ASISTENCIA] acude."},
		{Rule{Strategy: Placeholder, Format: FormatMIMIC},
			"Mr. [**PATIENT**] was seen by Dr. [**DOCTOR**] on [**DATE**] in [**CITY**]; [**PATIENT**] is well.",
			"Paciente: [**NOMBRE_SUJETO_ASISTENCIA**], nacida el [**FECHAS**] en [**TERRITORIO**]. Médico: Dra. [**NOMBRE_PERSONAL_SANITARIO**]. [**NOMBRE_SUJETO_ASISTENCIA**] acude."},
		{Rule{Strategy: Placeholder, Format: FormatAngle, Label: "PHI"},
			"Mr. <PHI> was seen by Dr. <PHI> on <PHI> in <PHI>; <PHI> is well.",
			"Paciente: <PHI>, nacida el <PHI> en <PHI>. Médico: Dra. <PHI>. <PHI> acude."},
		{Rule{Strategy: Placeholder, Format: FormatPhilter, Label: "NAME"},
			"Mr. {{{REDACTED-NAME}}} was seen by Dr. {{{REDACTED-NAME}}} on {{{REDACTED-NAME}}} in {{{REDACTED-NAME}}}; {{{REDACTED-NAME}}} is well.",
			"Paciente: {{{REDACTED-NAME}}}, nacida el {{{REDACTED-NAME}}} en {{{REDACTED-NAME}}}. Médico: Dra. {{{REDACTED-NAME}}}. {{{REDACTED-NAME}}} acude."},
		{Rule{Strategy: Hash},
			`Mr\. PATIENT-` + hex + ` was seen by Dr\. DOCTOR-` + hex + ` on DATE-` + hex + ` in CITY-` + hex + `; PATIENT-` + hex + ` is well\.`,
			`Paciente: NOMBRE_SUJETO_ASISTENCIA-` + hex + `, nacida el FECHAS-` + hex + ` en TERRITORIO-` + hex +
				`\. Médico: Dra\. NOMBRE_PERSONAL_SANITARIO-` + hex + `\. NOMBRE_SUJETO_ASISTENCIA-` + hex + ` acude\.`},
	} {
		for _, n := range []struct {
			lang string
			doc  pipeline.Document
			want string
		}{{"en", englishMaskNote(t), c.en}, {"es", spanishMaskNote(t), c.es}} {
			pol := maskPolicy(t, n.lang, c.rule)
			res, err := New(pol, nil, 1).Run([]pipeline.Document{n.doc}, Store{})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Docs[0].Text
			if c.rule.Strategy == Hash && !regexp.MustCompile(`^`+n.want+`$`).MatchString(got) || c.rule.Strategy != Hash && got != n.want {
				t.Errorf("%+v, %s:\n got %s\nwant %s", c.rule, n.lang, got, n.want)
			}
			assertMasked(t, n.doc, res, pol, c.rule.Strategy)
		}
	}
}

// A hash is the same for a value (in any case) throughout its scope, and
// another in another scope, mention or under another key; a later run
// keeps the stored one whatever its seed.
func TestHashIsKeyedAndStable(t *testing.T) {
	a := noteDoc(t, "a", "Harlan Valdez saw Dr. Okafor. HARLAN VALDEZ left.",
		[2]string{"PATIENT", "Harlan Valdez"}, [2]string{"DOCTOR", "Okafor"}, [2]string{"PATIENT", "HARLAN VALDEZ"})
	b := noteDoc(t, "b", "Harlan Valdez (another) saw Dr. Okafor.", [2]string{"PATIENT", "Harlan Valdez"}, [2]string{"DOCTOR", "Okafor"})
	pol := maskPolicy(t, "en", Rule{Strategy: Hash})
	run := func(seed uint64, store Store) *Result {
		res, err := New(pol, nil, seed).Run([]pipeline.Document{a, b}, store)
		if err != nil {
			t.Fatal(err)
		}
		assertClean(t, []pipeline.Document{a, b}, res, pol)
		return res
	}
	one := run(1, Store{})
	sa, sb := one.Docs[0].Spans, one.Docs[1].Spans
	if sa[0].Text != sa[2].Text {
		t.Errorf("one patient's value, two hashes: %s, %s", sa[0].Text, sa[2].Text)
	}
	if sa[0].Text == sb[0].Text {
		t.Errorf("patient scope: two patients' Harlan Valdez share %s", sa[0].Text)
	}
	if sa[1].Text != sb[1].Text {
		t.Errorf("corpus scope: the doctor has two hashes: %s, %s", sa[1].Text, sb[1].Text)
	}
	other := run(2, Store{})
	if other.Docs[0].Spans[0].Text == sa[0].Text || other.Docs[0].Spans[1].Text == sa[1].Text {
		t.Errorf("another key, the same hashes: %s %s", other.Docs[0].Spans[0].Text, other.Docs[0].Spans[1].Text)
	}
	again := run(2, Store{Mappings: one.Mappings})
	if again.Docs[0].Text != one.Docs[0].Text || again.Docs[1].Text != one.Docs[1].Text {
		t.Errorf("a later run with another seed rewrote the stored hashes:\n%s\n%s", again.Docs[0].Text, one.Docs[0].Text)
	}
	pol.Types["PATIENT"] = Rule{Strategy: Hash, Scope: ScopeMention}
	if mention := run(1, Store{}).Docs[0].Spans; mention[0].Text == mention[2].Text {
		t.Errorf("mention scope: two mentions share %s", mention[0].Text)
	}
	if v := valueHash(1, ScopeCorpus, "DOCTOR", "okafor"); "DOCTOR-"+v != sa[1].Text || valueHash(1, ScopeCorpus, "DOCTOR", "OKAFOR") != v {
		t.Errorf("the doctor's hash is %s, not HMAC(seed 1, corpus, DOCTOR, okafor) = %s", sa[1].Text, v)
	}
}

// replaceSpan rewrites span k of a surrogate note as text, moving the
// spans after it: a deliberately broken output.
func replaceSpan(d *pipeline.Document, k int, text string) {
	r := []rune(d.Text)
	s := &d.Spans[k]
	d.Text = string(r[:s.Start]) + text + string(r[s.End:])
	moved := len([]rune(text)) - (s.End - s.Start)
	s.Text, s.End = text, s.Start+len([]rune(text))
	for i := range d.Spans {
		if d.Spans[i].Start > s.Start {
			d.Spans[i].Start += moved
			d.Spans[i].End += moved
		}
	}
}

// The check reads masks: a label that is a type of the policy spells a
// doctor's name without copying it, a label of an open tag set that holds
// a value is written PHI, and a redaction that would spell its value is
// written with another character; a mask that holds the original (broken
// on purpose) is a leak.
func TestCheckReadsMasks(t *testing.T) {
	pol := maskPolicy(t, "en", Rule{Strategy: Placeholder})
	pol.Types["*"] = Rule{Strategy: Placeholder, Scope: ScopePatient}
	pol.Types["ID"] = Rule{Strategy: Redact, Scope: ScopePatient, Mask: "X", KeepLength: true}
	if err := pol.Validate(); err != nil {
		t.Fatal(err)
	}
	// Dr. Date, a label "Okafor" of the corpus's own, an id XXXX.
	doc := noteDoc(t, "p", "Seen by Dr. Date and Dr. Okafor on 03/16/2091. Listed: Harlan Valdez. Code XXXX.",
		[2]string{"DOCTOR", "Date"}, [2]string{"DOCTOR", "Okafor"}, [2]string{"DATE", "03/16/2091"},
		[2]string{"Okafor", "Harlan Valdez"}, [2]string{"ID", "XXXX"})
	res, err := New(pol, nil, 1).Run([]pipeline.Document{doc}, Store{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Seen by Dr. [DOCTOR] and Dr. [DOCTOR] on [DATE]. Listed: [PHI]. Code ****."
	if got := res.Docs[0].Text; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// The span's own label gives the name away, as the check says; its
	// text does not.
	if rep := assertClean(t, []pipeline.Document{doc}, res, pol); len(rep.Metadata) != 1 || rep.Metadata[0].Field != "label" || rep.Metadata[0].Span != 3 {
		t.Fatalf("the check finds %+v, want the label of span 3", rep.Metadata)
	}
	for _, c := range []struct {
		span       int
		text, leak string
	}{
		{3, "[Okafor]", "Okafor"},    // the open label, written unchecked
		{0, "[DOCTOR Date]", "Date"}, // a mask that is no mask
		{1, "Okafor", "Okafor"},      // the original left
		{4, "XXXX", "XXXX"},          // the redaction that spells its value
	} {
		broken := *res
		broken.Docs = []pipeline.Document{res.Docs[0]}
		broken.Docs[0].Spans = append([]pipeline.Span(nil), res.Docs[0].Spans...)
		replaceSpan(&broken.Docs[0], c.span, c.text)
		rep := Check([]pipeline.Document{doc}, &broken, pol)
		if len(rep.Misaligned) > 0 || len(rep.Leaks) != 1 || rep.Leaks[0].Value != c.leak {
			t.Errorf("%q: misaligned %v, leaks %+v, want %q", c.text, rep.Misaligned, rep.Leaks, c.leak)
		}
	}
}

// A masking option is refused with its type and field: on another
// strategy, or holding what it cannot; an unknown strategy lists the masks.
func TestPolicyMaskOptions(t *testing.T) {
	for _, c := range []struct{ rule, want string }{
		{`{"strategy": "redact", "scope": "patient", "mask": "**"}`, `type PATIENT: mask "**": want one printable character`},
		{`{"strategy": "redact", "scope": "patient", "mask": " "}`, `type PATIENT: mask " ": want one printable character`},
		{`{"strategy": "name", "scope": "patient", "keepLength": true}`, `type PATIENT: keepLength is an option of redact, not of strategy "name"`},
		{`{"strategy": "redact", "scope": "patient", "format": "mimic"}`, `type PATIENT: format is an option of placeholder, not of strategy "redact"`},
		{`{"strategy": "placeholder", "scope": "patient", "format": "curly"}`, `type PATIENT: format "curly": want brackets, mimic, angle or philter`},
		{`{"strategy": "hash", "scope": "patient", "label": "[NAME]"}`, `type PATIENT: label "[NAME]": want 1 to 40 letters`},
		{`{"strategy": "redact", "scope": "patient", "label": "NAME"}`, `type PATIENT: label is an option of placeholder and hash`},
		{`{"strategy": "mask", "scope": "patient"}`, `type PATIENT: unknown strategy "mask"`},
		{`{"strategy": "placeholder", "scope": "patient", "fromat": "mimic"}`, `fromat`},
	} {
		_, err := ParsePolicy([]byte(`{"types": {"PATIENT": ` + c.rule + `}}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.rule, err, c.want)
		}
		if err != nil && strings.Contains(c.want, "unknown strategy") && !strings.Contains(err.Error(), "hash, hospital, ip, keep, name, organization, phone, placeholder, profession, redact,") {
			t.Errorf("%s: the known strategies are not listed: %v", c.rule, err)
		}
	}
}

// A masked name's parts are a name's: the gold's miss of the surname alone
// is masked as the name is, in English and Spanish, and the check looks
// for it.
func TestMaskedNamePartsArePropagated(t *testing.T) {
	for _, c := range []struct {
		lang, text, name, want string
	}{
		{"en", "Harlan Valdez came in today. Later Valdez said he was better.", "Harlan Valdez",
			"[PATIENT] came in today. Later [PATIENT] said he was better."},
		{"es", "Acude Pilar Gómez Núñez a consulta. Gómez Núñez refiere dolor.", "Pilar Gómez Núñez",
			"Acude [PATIENT] a consulta. [PATIENT] refiere dolor."},
	} {
		pol := maskPolicy(t, c.lang, Rule{Strategy: Placeholder})
		doc := noteDoc(t, "p", c.text, [2]string{"PATIENT", c.name})
		res, err := New(pol, nil, 1).Run([]pipeline.Document{doc}, Store{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Docs[0].Text; got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.lang, got, c.want)
		}
		if rep := assertClean(t, []pipeline.Document{doc}, res, pol); !rep.OK() || len(rep.Propagated) != 1 {
			t.Errorf("%s: ok %v, propagated %v", c.lang, rep.OK(), rep.Propagated)
		}
		// Left in place, the surname is what the check finds.
		left := *res
		left.Docs = []pipeline.Document{doc}
		left.Docs[0].Spans = res.Docs[0].Spans[:1]
		left.Docs[0].Text = strings.Replace(c.text, c.name, res.Docs[0].Spans[0].Text, 1)
		left.Propagated = nil
		if rep := Check([]pipeline.Document{doc}, &left, pol); len(rep.Unannotated) != 1 {
			t.Errorf("%s: the surname left alone: unannotated %+v", c.lang, rep.Unannotated)
		}
	}
}

// A masked age is a number of years as a replaced one is: the 84 of a blood
// pressure elsewhere in the note is no unannotated original, "84 years" is.
func TestMaskedAgeIsSearchedAsAnAge(t *testing.T) {
	pol := DefaultPolicy()
	pol.Types["AGE"] = Rule{Strategy: Placeholder, Scope: ScopePatient}
	if err := pol.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want int
	}{
		{"Patient aged 84 seen. BP 142/84, HR 96.", 0},
		{"Patient aged 84 seen. She says she is 84 years old.", 1},
	} {
		doc := noteDoc(t, "p", c.text, [2]string{"AGE", "84"})
		res, err := New(pol, nil, 1).Run([]pipeline.Document{doc}, Store{})
		if err != nil {
			t.Fatal(err)
		}
		if rep := Check([]pipeline.Document{doc}, res, pol); len(rep.Unannotated) != c.want {
			t.Errorf("%q: %d unannotated finds %+v, want %d", c.text, len(rep.Unannotated), rep.Unannotated, c.want)
		}
	}
}
