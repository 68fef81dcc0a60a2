package release

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"reflect"
	"testing"

	"deidcorpus/pipeline"
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
	m, err := enc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := gunzip(t, buf.Bytes()); string(got) != string(whole)+"\n" {
		t.Fatalf("encoded in batches:\n%s\nwhole:\n%s", got, whole)
	}
	if !reflect.DeepEqual(m, snap.Manifest()) {
		t.Fatalf("manifest %+v, want %+v", m, snap.Manifest())
	}
	encoded, err := snap.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gunzip(t, encoded), gunzip(t, buf.Bytes())) {
		t.Fatal("Encode and an Encoder write different snapshots")
	}
	back, err := Decode(encoded)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, snap) {
		t.Fatalf("decoded %+v, want %+v", back, snap)
	}
}
