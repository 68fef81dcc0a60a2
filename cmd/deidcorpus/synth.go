package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
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
		summary: "generate a synthetic longitudinal corpus as i2b2 2014 XML or another format (no database)",
		args:    "--patients N [--seed S] [--notes MIN-MAX] [--format i2b2] --out DIR",
		examples: []string{
			"deidcorpus synth --patients 100 --out synth/",
			"deidcorpus synth --patients 20000 --seed 7 --notes 1-3 --out big/",
			"deidcorpus synth --patients 500 --format jsonl --out synth-jsonl/   # keeps each note's type",
		},
		setup: setupSynth,
	})
}

func setupSynth(e *env, fs *flag.FlagSet) action {
	patients := fs.Int("patients", 0, "number of patients (required)")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same corpus, byte for byte")
	notes := fs.String("notes", "2-5", "notes per patient, MIN-MAX or N")
	out := fs.String("out", "", "output directory, empty or new (required)")
	format := fs.String("format", formats.Default, "output format, one written a patient at a time ("+strings.Join(batchedFormats(), ", ")+
		"); jsonl keeps each note's type, which i2b2 XML cannot hold")
	return func(ctx context.Context, args []string) error {
		switch {
		case *patients <= 0:
			return usageErr("--patients: at least 1, not %d", *patients)
		case *out == "":
			return usageErr("--out is required")
		}
		f, err := formatFlag(*format)
		if err != nil {
			return err
		}
		if !slices.Contains(batchedFormats(), f.Name) {
			return usageErr("--format: %s is not written a patient at a time (%s are)", f.Name, strings.Join(batchedFormats(), ", "))
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
		dir := &formats.DirFiles{Dir: *out}
		stream := formats.NewStream(f, dir.Create)
		err = synth.Generate(synth.Options{Patients: *patients, Seed: *seed, NotesMin: lo, NotesMax: hi}, func(p synth.Patient) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := stream.Write(p.Docs); err != nil {
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
		if err == nil {
			err = stream.Close()
		}
		if cerr := dir.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		secs := time.Since(start).Seconds()
		fmt.Fprintf(e.stderr, "synth: %d patients, %d notes, %d PHI spans in %.1fs (%.0f notes/s)\n", done, nNotes, nSpans, secs, float64(nNotes)/secs)
		fmt.Fprintf(e.stdout, "wrote %s to %s\n", counted(nNotes, "note"), *out)
		// The files hold no split: an import names the one they go to.
		fmt.Fprintf(e.stderr, "import them with: deidcorpus import --corpus NAME --tagset i2b2-2014 --format %s --split train %s\n", f.Name, *out)
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

// batchedFormats are the formats written a batch of documents at a time.
func batchedFormats() []string {
	var out []string
	for _, name := range formats.Names() {
		if f, err := formats.Lookup(name); err == nil && f.Batched && f.Write != nil && !f.RebuildsText {
			out = append(out, name)
		}
	}
	return out
}
