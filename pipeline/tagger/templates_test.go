package tagger

import "testing"

// A template's start function only saves trying its pattern where it cannot
// match: wherever the pattern matches at a token outside an earlier match
// (where matchTemplates tries it), start must admit the token.
func TestTemplateStartsAdmitEveryMatch(t *testing.T) {
	texts := []string{
		"usuario ab12 y xyz123, ABCD12345 y 1234AB56789; Ref. 12ab, id a1b2c3 ñu4 MAyo5",
		"Correo: ana.ruiz@hospital.es; www.example.org y http://x.es/a; 192.168.1.10; 123-45-6789",
		"Fecha 12/03/2019, 2019-03-12, marzo de 2019, 3 de mayo del 2001, 70 años, 5 meses; (912) 345-6789",
		"Tel. +34 912 345 678, NHC 1234567, 12-3456789, 28 41 67 12, E-41013, 41013-1234, 1990s",
	}
	check := func(t *testing.T, text string) {
		tk := Tokenize(text)
		for _, tmpl := range templates {
			covered := 0
			for _, tok := range tk.Tokens {
				if tok.Start < covered {
					continue
				}
				e := tmpl.matchAt(tk, tok, false)
				if e < 0 {
					continue
				}
				if tmpl.matchAt(tk, tok, true) < 0 {
					t.Errorf("%s matches %q but start refuses the token %q", tmpl.Name, text[tok.Start:e], text[tok.Start:tok.End])
				}
				covered = e
			}
		}
	}
	for _, text := range texts {
		check(t, text)
	}
	t.Run("meddocan", func(t *testing.T) {
		for _, split := range []string{"train", "dev"} {
			for _, d := range readMeddocan(t, split) {
				check(t, d.Text)
			}
		}
	})
}
