package tagger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
)

// tinyModel trains a model on a few synthetic notes in a blink, keeping
// only frequent attributes: a small valid artifact for the fuzzer to start
// from (small inputs mutate and minimize fast).
func tinyModel(tb testing.TB) *Model {
	tb.Helper()
	var docs []pipeline.Document
	if err := synth.Generate(synth.Options{Patients: 2, Seed: 1}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Training.MaxIterations = 3
	cfg.Training.MinFreq = 8
	m, err := Train(context.Background(), docs, cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// artifact writes a model file around meta and content with the right hash,
// so that fuzzed content reaches the parser behind the hash check.
func artifact(meta, content []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	writeU32(&b, FormatVersion)
	sum := sha256.Sum256(content)
	b.Write(sum[:])
	writeU32(&b, uint32(len(meta)))
	b.Write(meta)
	b.Write(content)
	return b.Bytes()
}

// FuzzLoad: a model file (a user's upload, an exported model) loads or fails
// with an error, never panics or allocates without bound; a model that
// loads tags without panicking and saves to the same identity.
func FuzzLoad(f *testing.F) {
	var buf bytes.Buffer
	if err := tinyModel(f).Save(&buf); err != nil {
		f.Fatal(err)
	}
	saved := buf.Bytes()
	at := len(magic) + 4 + sha256.Size
	n := int(binary.LittleEndian.Uint32(saved[at:]))
	meta, content := saved[at+4:at+4+n], saved[at+4+n:]
	f.Add(meta, content, false)
	f.Add(meta, content[:len(content)/2], false)
	f.Add([]byte("{}"), []byte{}, false)
	f.Add(meta, content, true)
	f.Fuzz(func(t *testing.T, meta, content []byte, raw bool) {
		data := artifact(meta, content)
		if raw { // the bytes as they are, hash included: what corruption looks like
			data = append(append([]byte(magic), meta...), content...)
		}
		m, err := Load(bytes.NewReader(data))
		if err != nil {
			return
		}
		doc := pipeline.Document{ID: "d", Patient: "p", Text: "Seen by Dr. Ann Lee on 03/04/2090 at Boston General, 617-555-0134."}
		out, err := m.Tag(context.Background(), []pipeline.Document{doc}, TagOptions{Workers: 1})
		if err != nil {
			return
		}
		for _, d := range out {
			if err := d.Validate(true); err != nil {
				t.Fatalf("a loaded model tagged an invalid span: %v", err)
			}
		}
		var again bytes.Buffer
		if err := m.Save(&again); err != nil {
			t.Fatal(err)
		}
		m2, err := Load(&again)
		if err != nil || m2.Hash() != m.Hash() {
			t.Fatalf("save and load changed the model: %v", err)
		}
	})
}
