package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"deidcorpus/apperr"
	"deidcorpus/pipeline/experiment"
)

func init() {
	register(&command{
		name: "split",
		summary: "cut a corpus into train, dev and test by patient (all of a patient's notes in one split), " +
			"by shares of the notes or numbers of patients, the same for a seed (curators)",
		args: "--corpus C --train T --dev D --test T [--seed N] [--dry-run] [--force]",
		examples: []string{
			"deidcorpus split --corpus notes --train 0.7 --dev 0.1 --test 0.2",
			"deidcorpus split --corpus notes --train 8 --dev 2 --test 2 --seed 7 --dry-run",
		},
		setup: setupSplit,
	})
}

func setupSplit(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "the corpus (required)")
	var parts [3]float64
	for i, name := range experiment.SplitNames {
		fs.Float64Var(&parts[i], name, 0, name+"'s part: a share of the notes (the three add up to 1) or a number of patients (they add up to the corpus's)")
	}
	seed := fs.Uint64("seed", 1, "the seed that orders the patients: the same seed cuts the same corpus the same way")
	dryRun := fs.Bool("dry-run", false, "say what the cut would be and change nothing")
	force := fs.Bool("force", false, "cut a corpus that has splits already (models and evaluations of its old splits keep their figures)")
	return func(ctx context.Context, args []string) error {
		switch {
		case len(args) > 0:
			return usageErr("split takes flags only (got %d arguments)", len(args))
		case *corpus == "":
			return usageErr("split needs --corpus")
		case parts == [3]float64{}:
			return usageErr("split needs --train, --dev and --test (shares of the notes, such as 0.7, 0.1 and 0.2)")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.split", map[string]any{"corpus": *corpus})
		if err != nil {
			return err
		}
		defer st.Close()
		c, err := st.CorpusByName(ctx, *corpus)
		if err != nil {
			return err
		}
		docs, err := st.DocumentPlaces(ctx, c)
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			return apperr.New(apperr.Invalid, "corpus %q has no documents to split", c.Name)
		}
		splits, err := experiment.AssignSplits(docs, parts, *seed)
		if err != nil {
			return usageErr("--train, --dev, --test: %v", err)
		}
		cut := newSplitCount()
		was := newSplitCount()
		moved := map[string]string{}
		split := false // the corpus has splits already
		for i, d := range docs {
			cut.add(splits[i], d.Patient, d.ID)
			was.add(d.Split, d.Patient, d.ID)
			split = split || d.Split != "unassigned"
			if d.Split != splits[i] {
				moved[d.ID] = splits[i]
			}
		}
		if len(moved) == 0 {
			fmt.Fprintf(e.stdout, "corpus %q is cut so already: nothing to change\n", c.Name)
			return cut.write(e.stdout)
		}
		verb := "cut"
		if *dryRun {
			verb = "would cut"
		}
		if split && !*force {
			fmt.Fprintf(e.stdout, "corpus %q is split already:\n", c.Name)
			if err := was.write(e.stdout); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "\nthis cut would move %s:\n", counted(len(moved), "document"))
			if err := cut.write(e.stdout); err != nil {
				return err
			}
			if *dryRun {
				return nil
			}
			return apperr.New(apperr.Conflict, "corpus %q is split already: --force cuts it again (models and evaluations of its old splits keep their figures)", c.Name)
		}
		fmt.Fprintf(e.stdout, "%s corpus %q by patient (seed %d), moving %s:\n", verb, c.Name, *seed, counted(len(moved), "document"))
		if err := cut.write(e.stdout); err != nil {
			return err
		}
		if *dryRun {
			return nil
		}
		return st.SetSplits(ctx, c, moved)
	}
}

// splitCount counts patients and documents per split.
type splitCount struct {
	patients  map[string]map[string]bool
	documents map[string]int
	total     int
}

func newSplitCount() *splitCount {
	return &splitCount{patients: map[string]map[string]bool{}, documents: map[string]int{}}
}

// add counts a document of a patient ("" for none: the document counts as
// one) in a split.
func (s *splitCount) add(split, patient, doc string) {
	if s.patients[split] == nil {
		s.patients[split] = map[string]bool{}
	}
	if patient == "" {
		patient = "\x00" + doc
	}
	s.patients[split][patient] = true
	s.documents[split]++
	s.total++
}

// write prints the splits that hold documents.
func (s *splitCount) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "SPLIT\tPATIENTS\tDOCUMENTS\tSHARE")
	for _, name := range append(experiment.SplitNames[:], "unassigned") {
		if n := s.documents[name]; n > 0 {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f%%\n", name, len(s.patients[name]), n, 100*float64(n)/float64(s.total))
		}
	}
	return tw.Flush()
}
