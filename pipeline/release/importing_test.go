package release

import (
	"errors"
	"strings"
	"testing"

	"deidcorpus/pipeline/formats"
)

func metaFile(name, json string) formats.File { return formats.File{Name: name, Data: []byte(json)} }

// The format and tag set of release.json files that agree are read; one
// that is no release's is passed over; two that disagree, or a format no
// reader knows, are refused naming the files.
func TestReadDefaults(t *testing.T) {
	a := metaFile("a.zip:release.json", `{"name": "r", "version": "1.0.0", "format": "jsonl", "tagset": "meddocan"}`)
	b := metaFile("b.zip:release.json", `{"name": "s", "version": "2.0.0", "format": "jsonl"}`)
	c := metaFile("c.zip:release.json", `{"name": "t", "version": "1.0.0", "format": "brat", "tagset": "meddocan"}`)
	stray := metaFile("release.json", `{"note": "not a release", "format": "brat"}`)
	notes := formats.File{Name: "a.zip:gold/1.txt", Data: []byte("x")}

	d, err := ReadDefaults(formats.Files([]formats.File{notes, a, stray, b}), true, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Defaults{Format: Stated{"jsonl", "a.zip:release.json"}, TagSet: Stated{"meddocan", "a.zip:release.json"}}); d != want {
		t.Errorf("defaults %+v, want %+v", d, want)
	}
	_, err = ReadDefaults(formats.Files([]formats.File{a, c}), true, true)
	if want := "a.zip:release.json is a release in format jsonl and c.zip:release.json one in format brat: import them one at a time, or give the format"; err == nil || err.Error() != want {
		t.Errorf("disagreeing formats: %v, want %s", err, want)
	}
	if d, err := ReadDefaults(formats.Files([]formats.File{a, c}), false, true); err != nil || d.Format.Value != "" || d.TagSet.Value != "meddocan" {
		t.Errorf("with the format given: %+v, %v", d, err)
	}
	bad := metaFile("x.zip:release.json", `{"name": "r", "version": "1", "format": "jsn"}`)
	if _, err := ReadDefaults(formats.Files([]formats.File{bad}), true, false); err == nil || !strings.HasPrefix(err.Error(), `x.zip:release.json: format: unknown format "jsn"`) {
		t.Errorf("unknown format: %v", err)
	}
}

// Splits gives each document the split its release.json lists, by archive
// id first; an id listed with two splits keeps none; a split the check
// refuses fails the reading, naming the file.
func TestSplits(t *testing.T) {
	meta := metaFile("r.zip:release.json", `{"name": "r", "version": "1.0.0", "manifest": {"documents": [
		{"set": "gold", "id": "1-01", "sha256": "00", "split": "train"},
		{"set": "gold", "id": "731902", "archive_id": "1-02", "sha256": "00", "split": "dev"},
		{"set": "other", "id": "2-01", "sha256": "00", "split": "train"},
		{"set": "sys", "id": "2-01", "sha256": "00", "split": "test"}]}}`)
	s := NewSplits(func(split string) error {
		if split == "training" {
			return errors.New(`unknown split "training"`)
		}
		return nil
	})
	var seen []string
	if err := s.Watch(formats.Files([]formats.File{meta}))(func(f formats.File) error {
		seen = append(seen, f.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 {
		t.Errorf("files passed on: %v", seen)
	}
	for id, want := range map[string]string{"1-01": "train", "1-02": "dev", "731902": "", "2-01": "", "3-01": ""} {
		if got := s.Of(id); got != want {
			t.Errorf("split of %s = %q, want %q", id, got, want)
		}
	}
	bad := metaFile("release.json", `{"name": "r", "version": "1", "manifest": {"documents": [{"set": "gold", "id": "1-01", "sha256": "00", "split": "training"}]}}`)
	err := NewSplits(s.valid).Watch(formats.Files([]formats.File{bad}))(func(formats.File) error { return nil })
	var fe *formats.Error
	if !errors.As(err, &fe) || fe.File != "release.json" || !strings.Contains(err.Error(), `document 1-01: split: unknown split "training"`) {
		t.Errorf("a refused split: %v", err)
	}
}

func TestOwnFile(t *testing.T) {
	for name, want := range map[string]bool{"r.zip:release.json": true, "dir/r/MANIFEST": true, "r.zip:DATASHEET.md": true,
		"r.zip:gold/1-01.xml": false, "release.json.bak": false} {
		if OwnFile(name) != want {
			t.Errorf("OwnFile(%q) = %v", name, !want)
		}
	}
}
