package release

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// A manifest bigger than a run is written to disk in sorted runs and merged
// back: the entries come sorted by set and id, as many times as asked, with
// the root hash of the whole.
func TestManifestBuilderRuns(t *testing.T) {
	b := newManifestBuilderRuns(3)
	var want []Entry
	rng := rand.New(rand.NewPCG(1, 2))
	for _, set := range []string{"system", "gold", "adjudicated"} {
		ids := rng.Perm(40)
		for len(ids) > 0 {
			n := min(len(ids), 1+rng.IntN(5))
			var docs []pipeline.Document
			for _, id := range ids[:n] {
				d := pipeline.Document{ID: fmt.Sprintf("note-%03d", id), Text: set + " text " + fmt.Sprint(id)}
				docs = append(docs, d)
				want = append(want, Entry{Set: set, ID: d.ID, Hash: DocHash(d)})
			}
			b.add(set, docs)
			ids = ids[n:]
		}
	}
	sort.Slice(want, func(i, j int) bool {
		return want[i].Set < want[j].Set || want[i].Set == want[j].Set && want[i].ID < want[j].ID
	})
	if b.entries.Spilled() < 30 {
		t.Fatalf("%d runs written to disk for 120 entries in runs of 3", b.entries.Spilled())
	}
	for pass := 0; pass < 2; pass++ {
		var got []Entry
		root, err := b.each(func(e digestEntry) error {
			got = append(got, e.entry())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pass %d: entries\n%v\nwant\n%v", pass, got, want)
		}
		if root != rootHash(want) {
			t.Fatalf("pass %d: root %s, want %s", pass, root, rootHash(want))
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// The same document twice is an error, whichever runs hold it.
	b = newManifestBuilderRuns(2)
	defer b.Close()
	b.add("gold", []pipeline.Document{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "b", Text: "again"}})
	if _, err := b.root(); err == nil || !strings.Contains(err.Error(), "document b appears twice in set gold") {
		t.Fatalf("a document twice: %v", err)
	}
}

// release.json, written as its entries are merged, is byte for byte what
// json.MarshalIndent writes of the release's meta with its manifest, with
// documents or without; and an archive whose documents do not add up to the
// release's root hash is refused.
func TestPackToMetaFile(t *testing.T) {
	f, _ := formats.Lookup("jsonl")
	for _, snap := range []Snapshot{sample(), {Sets: map[string][]pipeline.Document{"gold": nil}}} {
		meta := Meta{Name: "notes", Version: "1.0.0", Corpus: "c", Parent: "notes@0.9.0"}
		each := func(fn func(string, []pipeline.Document) error) error { return fn("gold", snap.Sets["gold"]) }
		var c formats.Collector
		if err := PackTo(meta, each, f, "# sheet\n", c.Create); err != nil {
			t.Fatal(err)
		}
		manifest, err := snap.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		meta.Format, meta.Manifest = f.Name, manifest
		want, _ := json.MarshalIndent(meta, "", "  ")
		var got string
		for _, file := range c.Files() {
			if file.Name == MetaFile {
				got = string(file.Data)
			}
		}
		if got != string(want)+"\n" {
			t.Fatalf("release.json:\n%s\nwant\n%s", got, want)
		}

		meta.Manifest = Manifest{Root: strings.Repeat("0", 64)}
		err = PackTo(meta, each, f, "# sheet\n", new(formats.Collector).Create)
		if err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Fatalf("documents that do not add up to the release's root: %v", err)
		}
	}
}
