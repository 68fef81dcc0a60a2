package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/synth"
)

func init() {
	register(&command{
		name:    "synth",
		summary: "generate a synthetic longitudinal corpus as i2b2 2014 XML (no database)",
		args:    "--patients N [--seed S] [--notes MIN-MAX] --out DIR",
		examples: []string{
			"deidcorpus synth --patients 100 --out synth/",
			"deidcorpus synth --patients 20000 --seed 7 --notes 1-3 --out big/",
		},
		setup: setupSynth,
	})
}

func setupSynth(e *env, fs *flag.FlagSet) action {
	patients := fs.Int("patients", 0, "number of patients (required)")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same corpus, byte for byte")
	notes := fs.String("notes", "2-5", "notes per patient, MIN-MAX or N")
	out := fs.String("out", "", "output directory, empty or new (required)")
	return func(ctx context.Context, args []string) error {
		if *patients <= 0 || *out == "" {
			return usageErr("--patients (at least 1) and --out are required")
		}
		lo, hi, err := parseRange(*notes)
		if err != nil {
			return apperr.New(apperr.Invalid, "--notes %q: %v", *notes, err)
		}
		if err := newOutDir(*out); err != nil {
			return err
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}

		update, finish := progress(e.stderr, "synth")
		start := time.Now()
		nNotes, nSpans, done := 0, 0, 0
		err = synth.Generate(synth.Options{Patients: *patients, Seed: *seed, NotesMin: lo, NotesMax: hi}, func(p synth.Patient) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			files, err := formats.WriteI2B2(p.Docs)
			if err != nil {
				return err
			}
			if err := formats.WriteDir(*out, files); err != nil {
				return err
			}
			for _, d := range p.Docs {
				nSpans += len(d.Spans)
			}
			nNotes += len(p.Docs)
			done++
			update(done, *patients)
			return nil
		})
		finish()
		if err != nil {
			return err
		}
		secs := time.Since(start).Seconds()
		fmt.Fprintf(e.stderr, "synth: %d patients, %d notes, %d PHI spans in %.1fs (%.0f notes/s)\n", done, nNotes, nSpans, secs, float64(nNotes)/secs)
		fmt.Fprintf(e.stdout, "wrote %s to %s\n", counted(nNotes, "note"), *out)
		return nil
	}
}

// parseRange reads "MIN-MAX" or "N".
func parseRange(s string) (lo, hi int, err error) {
	a, b, isRange := strings.Cut(s, "-")
	if lo, err = strconv.Atoi(strings.TrimSpace(a)); err != nil {
		return 0, 0, fmt.Errorf("want MIN-MAX or N")
	}
	hi = lo
	if isRange {
		if hi, err = strconv.Atoi(strings.TrimSpace(b)); err != nil {
			return 0, 0, fmt.Errorf("want MIN-MAX or N")
		}
	}
	if lo < 1 || hi < lo || hi > 99 {
		return 0, 0, fmt.Errorf("want 1 <= MIN <= MAX <= 99")
	}
	return lo, hi, nil
}
