package release

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An Encoder fed a batch at a time writes the snapshot's JSON, byte for byte
// what encoding/json writes of it whole (so snapshots stored before it read
// the same), and makes the snapshot's manifest; it decodes back.
func TestEncoderBatches(t *testing.T) {
	snap := sample()
	snap.Sets["adjudicated"] = []pipeline.Document{{ID: "200-01", Patient: "200", Text: `<"quoted"> & done`}}
	whole, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for _, set := range []string{"adjudicated", "gold"} {
		enc.Set(set)
		for _, d := range snap.Sets[set] {
			enc.Add([]pipeline.Document{d})
		}
	}
	root, err := enc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := gunzip(t, buf.Bytes()); string(got) != string(whole)+"\n" {
		t.Fatalf("encoded in batches:\n%s\nwhole:\n%s", got, whole)
	}
	if want := rootOf(t, snap); root != want {
		t.Fatalf("root %s, want %s", root, want)
	}
	encoded, err := snap.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gunzip(t, encoded), gunzip(t, buf.Bytes())) {
		t.Fatal("Encode and an Encoder write different snapshots")
	}
	back, err := Decode(bytes.NewReader(encoded))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, snap) {
		t.Fatalf("decoded %+v, want %+v", back, snap)
	}
}

// An archive packed from a stored snapshot a document at a time holds the
// files Pack makes of it whole, byte for byte, and verifies.
func TestPackToBatches(t *testing.T) {
	snap := sample()
	snap.Sets["adjudicated"] = snap.Sets["gold"][:1]
	data, err := snap.Encode()
	if err != nil {
		t.Fatal(err)
	}
	meta := Meta{Name: "notes", Version: "1.0.0", Corpus: "c"}
	for _, format := range []string{"i2b2", "jsonl"} {
		f, _ := formats.Lookup(format)
		want, err := Pack(meta, snap, f, "# sheet\n")
		if err != nil {
			t.Fatal(err)
		}
		var c formats.Collector
		each := func(fn func(string, []pipeline.Document) error) error { return Each(bytes.NewReader(data), 1, fn) }
		if err := PackTo(meta, each, f, "# sheet\n", c.Create); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, file := range c.Files() {
			got[file.Name] = string(file.Data)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d files, want %d", format, len(got), len(want))
		}
		for _, file := range want {
			if got[file.Name] != string(file.Data) {
				t.Errorf("%s: %s differs:\n%s\nwant\n%s", format, file.Name, got[file.Name], file.Data)
			}
		}
		if _, err := Verify(c.Files()); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
	}
}

// Each's batches hold about n documents and end where a patient's do.
func TestEachKeepsPatientsTogether(t *testing.T) {
	var docs []pipeline.Document
	for _, p := range []struct {
		id    string
		notes int
	}{{"a", 3}, {"b", 1}, {"c", 2}, {"d", 1}} {
		for k := range p.notes {
			docs = append(docs, pipeline.Document{ID: fmt.Sprintf("%s-%d", p.id, k), Patient: p.id, Text: "x"})
		}
	}
	data, err := Snapshot{Sets: map[string][]pipeline.Document{"gold": docs}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	if err := Each(bytes.NewReader(data), 2, func(_ string, batch []pipeline.Document) error {
		var ids []string
		for _, d := range batch {
			ids = append(ids, d.ID)
		}
		got = append(got, ids)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"a-0", "a-1", "a-2"}, {"b-0", "c-0", "c-1"}, {"d-0"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

// A snapshot that is not one fails to decode with a message, not a panic.
func TestEachMalformed(t *testing.T) {
	for _, text := range []string{`[]`, `{"sets":[]}`, `{"sets":{"gold":{}}}`, `{"sets":{"gold":[1]}}`, `{"sets":{"gold":[`} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(text))
		zw.Close()
		if err := Each(&buf, 10, func(string, []pipeline.Document) error { return nil }); err == nil {
			t.Errorf("%s decoded", text)
		}
	}
}
