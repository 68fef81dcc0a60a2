package main

import (
	"context"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/documentprogress"
	"deidcorpus/ent/span"
	"deidcorpus/store"
)

// The demo's annotation: two annotator accounts given a batch of the demo
// corpus's dev notes, pre-annotated from gold, in which the second made a
// few deliberate mistakes (a type, a boundary, a missed span), so that the
// dashboard's Annotate page lists their work and Adjudicate has something
// to adjudicate on first start. Blind: each reads its own set only.
const demoBatch = "demo-batch"

// demoAnnotators are the demo's annotator accounts (no tokens: an admin
// makes one with tokens create to sign in as them).
var demoAnnotators = []string{"demo-ann", "demo-bob"}

// demoAnnotatedNotes is how many dev notes the batch holds.
const demoAnnotatedNotes = 4

// loadDemoAnnotation makes the demo's annotators, their batch and their
// edits, in the demo corpus just loaded.
func loadDemoAnnotation(ctx context.Context, st *store.Store) error {
	for _, name := range demoAnnotators {
		// An account of a demo corpus deleted since is taken again.
		if _, err := st.CreateUser(ctx, name, auth.Annotator); err != nil && apperr.CodeOf(err) != apperr.Conflict {
			return fmt.Errorf("demo annotator %s: %w", name, err)
		}
		if _, err := st.AssignCorpus(ctx, name, demoCorpus, true); err != nil {
			return fmt.Errorf("demo annotator %s: %w", name, err)
		}
	}
	sets, err := st.AssignDocuments(ctx, store.Assignment{Corpus: demoCorpus, Set: demoBatch, Annotators: demoAnnotators,
		Split: "dev", Limit: demoAnnotatedNotes, PreannotateFrom: "gold"})
	if err != nil {
		return fmt.Errorf("demo assignment: %w", err)
	}
	ann, bob := sets[0], sets[1]
	states, err := st.SetProgress(ctx, bob)
	if err != nil {
		return err
	}
	// bob's first three notes, one mistake each, then done; ann has done
	// the first two and is in the third.
	mistakes := []func(sp []*ent.Span) (int, store.SpanChange, bool){
		func(sp []*ent.Span) (int, store.SpanChange, bool) { // a doctor taken for the patient
			for _, s := range sp {
				if s.Type == "DOCTOR" {
					return s.ID, store.SpanChange{Type: "PATIENT"}, false
				}
			}
			return 0, store.SpanChange{}, false
		},
		func(sp []*ent.Span) (int, store.SpanChange, bool) { // a span cut one character short
			for _, s := range sp {
				if s.End-s.Start > 3 {
					return s.ID, store.SpanChange{Start: s.Start, End: s.End - 1}, false
				}
			}
			return 0, store.SpanChange{}, false
		},
		func(sp []*ent.Span) (int, store.SpanChange, bool) { // a span missed
			if len(sp) == 0 {
				return 0, store.SpanChange{}, false
			}
			return sp[len(sp)-1].ID, store.SpanChange{}, true
		},
	}
	for i, mistake := range mistakes {
		if i >= len(states) {
			break
		}
		doc := states[i].DocumentID
		spans, err := st.Client.Span.Query().Where(span.AnnotationSetID(bob.ID), span.DocumentID(doc)).
			Order(ent.Asc(span.FieldStart), ent.Asc(span.FieldID)).All(ctx)
		if err != nil {
			return err
		}
		version := 0
		if id, change, remove := mistake(spans); id != 0 {
			if remove {
				_, err = st.RemoveSpan(ctx, id, version)
			} else {
				_, err = st.ChangeSpan(ctx, id, version, change)
			}
			if err != nil {
				return fmt.Errorf("demo annotation: %w", err)
			}
			version++
		}
		if _, err := st.SetDocumentStatus(ctx, bob.ID, doc, version, documentprogress.StatusDone); err != nil {
			return err
		}
		status := documentprogress.StatusDone
		if i == 2 {
			status = documentprogress.StatusInProgress
		}
		if _, err := st.SetDocumentStatus(ctx, ann.ID, doc, 0, status); err != nil {
			return err
		}
	}
	return nil
}
