package tagger_test

import (
	"bytes"
	"context"
	"fmt"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/pipeline/tagger"
)

// Train the hybrid tagger on synthetic notes, save the model file and load
// it back (what `deidcorpus models export` and `tag --model-file` do), then
// tag a new note.
func Example() {
	var train []pipeline.Document
	synth.Generate(synth.Options{Patients: 20, Seed: 1}, func(p synth.Patient) error {
		train = append(train, p.Docs...)
		return nil
	})
	cfg := tagger.DefaultConfig()
	cfg.Training.MaxIterations = 40
	m, err := tagger.Train(context.Background(), train, cfg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	var file bytes.Buffer
	if err := m.Save(&file); err != nil {
		fmt.Println(err)
		return
	}
	loaded, err := tagger.Load(&file)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("same model after saving:", loaded.Hash() == m.Hash())

	note := pipeline.Document{ID: "900-01", Patient: "900", Text: "Record date: 2091-05-02\nPatient Maria Lopez was seen by Dr. John Carter at Mercy Hospital."}
	tagged, err := loaded.Tag(context.Background(), []pipeline.Document{note}, tagger.TagOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range tagged[0].Spans {
		fmt.Printf("%s/%s %q\n", s.Category, s.Type, s.Text)
	}
	// Output:
	// same model after saving: true
	// DATE/DATE "2091-05-02"
	// NAME/PATIENT "Maria Lopez"
	// NAME/DOCTOR "John Carter"
	// LOCATION/HOSPITAL "Mercy Hospital"
}
