package formats

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
)

func TestReadPhysioNetCorpusOffsets(t *testing.T) {
	dir := shared.Path(t, "physionet-deid")
	files, err := ReadPaths(filepath.Join(dir, "id.deid"))
	require.NoError(t, err)
	_, err = ReadPhysioNet(files, ReadOptions{})
	require.ErrorContains(t, err, "id.deid:403: tag PHI [122:136]: overlaps PHI [114:131] (line 402)") // the gold itself overlaps
	docs, err := ReadPhysioNet(files, ReadOptions{AllowOverlap: true})
	require.NoError(t, err)
	require.Equal(t, 2425, len(docs)) // notes with a header in id.deid, PHI or not
	spans := 0
	for _, d := range docs {
		require.Empty(t, d.Text)
		spans += len(d.Spans)
	}
	require.Equal(t, 1779, spans)
	require.Equal(t, "1-1", docs[0].ID)
	require.Equal(t, "1", docs[0].Patient)
	require.Equal(t, 1, docs[0].RecordOrder)
	require.Equal(t, pipeline.Span{Start: 48, End: 55, Category: "PHI", Type: "PHI"}, docs[0].Spans[0])

	// The phrase file adds types and surrogate text to the same offsets.
	files, err = ReadPaths(filepath.Join(dir, "id.deid"), filepath.Join(dir, "id-phi.phrase"))
	require.NoError(t, err)
	typed, err := ReadPhysioNet(files, ReadOptions{AllowOverlap: true})
	require.NoError(t, err)
	require.Equal(t, 2425, len(typed))
	require.Equal(t, pipeline.Span{Start: 48, End: 55, Type: "Location", Text: "CALVERT"}, typed[0].Spans[0])
	counts := map[string]int{}
	for _, d := range typed {
		for _, s := range d.Spans {
			counts[s.Type]++
		}
	}
	// The data README's per-type totals.
	require.Equal(t, map[string]int{"HCPName": 593, "Date": 482, "Location": 367, "RelativeProxyName": 175, "PTName": 54,
		"Phone": 53, "DateYear": 46, "Age": 4, "Other": 3, "PTNameInitial": 2}, counts)

	// deid.pl's own output, tab-separated, overlaps included.
	files, err = ReadPaths(filepath.Join(dir, "GSoutput", "id.phi"))
	require.NoError(t, err)
	sys, err := ReadPhysioNet(files, ReadOptions{AllowOverlap: true})
	require.NoError(t, err)
	require.Equal(t, 2434, len(sys))
	spans = 0
	for _, d := range sys {
		spans += len(d.Spans)
	}
	require.Equal(t, 2169, spans)
}

func TestPhysioNetRoundTripWithText(t *testing.T) {
	docs := []pipeline.Document{
		{ID: "7-1", Patient: "7", RecordOrder: 1, Text: "Seen by Dr. Smith on 7/22.\nCall 555-1234.\n", Spans: []pipeline.Span{
			{Start: 12, End: 17, Category: "HCPName", Type: "HCPName", Text: "Smith"},
			{Start: 21, End: 25, Category: "Date", Type: "Date", Text: "7/22"},
			{Start: 32, End: 40, Category: "Phone", Type: "Phone", Text: "555-1234"},
		}},
		{ID: "7-2", Patient: "7", RecordOrder: 2, Text: "No PHI, and no final newline"},
		{ID: "12-3", Patient: "12", RecordOrder: 3, Text: "Ñandú en Córdoba\n", Spans: []pipeline.Span{
			{Start: 9, End: 16, Category: "Location", Type: "Location", Text: "Córdoba"},
		}},
	}
	files, err := WritePhysioNet(docs)
	require.NoError(t, err)
	require.Len(t, files, 3)
	back, err := ReadPhysioNet(files, ReadOptions{})
	require.NoError(t, err)
	// The files carry types only: the import takes each category from the
	// corpus's tag set (an i2b2 2014 DOCTOR is a NAME), as from i2b2 2006.
	want := slices.Clone(docs)
	for i := range want {
		want[i].Spans = slices.Clone(want[i].Spans)
		for k := range want[i].Spans {
			want[i].Spans[k].Category = ""
		}
	}
	require.Equal(t, want, back)

	// Offsets alone read back without text, and without types.
	back, err = ReadPhysioNet(files[:1], ReadOptions{})
	require.NoError(t, err)
	require.Len(t, back, 3)
	require.Empty(t, back[0].Text)
	require.Equal(t, pipeline.Span{Start: 12, End: 17, Category: "PHI", Type: "PHI"}, back[0].Spans[0])
}

func TestPhysioNetErrorsNameFileLineField(t *testing.T) {
	cases := []struct {
		name, file, data string
		line             int
		field            string
	}{
		{"no header", "a.deid", "12 12 20\n", 1, "offsets"},
		{"bad number", "a.deid", "Patient 1 Note 1\n12 x 20\n", 2, "start"},
		{"two numbers", "a.phi", "Patient 1\tNote 1\n12\t20\n", 2, "offsets"},
		{"empty span", "a.deid", "Patient 1 Note 1\n20 20 20\n", 2, "tag PHI [20:20]"},
		{"note twice", "a.deid", "Patient 1 Note 1\nPatient 1 Note 1\n", 2, "patient 1 note 1"},
		{"short phrase", "a.phrase", "1 1 48 55\n", 1, "phrase"},
		{"phrase end", "a.phrase", "1 1 48 5x Location CALVERT\n", 1, "end"},
		{"unterminated", "a.text", "START_OF_RECORD=1||||1||||\ntext\n", 1, "END_OF_RECORD"},
		{"bad record header", "a.text", "\nSTART_OF_RECORD=1||||\n", 2, "START_OF_RECORD"},
		{"span past text", "a.text", "START_OF_RECORD=1||||1||||\nab\n||||END_OF_RECORD\n", 2, "tag PHI [1:9]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := []File{{Name: c.file, Data: []byte(c.data)}}
			if c.name == "span past text" {
				files = append(files, File{Name: "b.deid", Data: []byte("Patient 1 Note 1\n1 1 9\n")})
				c.file = "b.deid"
			}
			_, err := ReadPhysioNet(files, ReadOptions{})
			var fe *Error
			require.True(t, errors.As(err, &fe), "%v", err)
			require.Equal(t, c.file, fe.File, err.Error())
			require.Equal(t, c.line, fe.Line, err.Error())
			require.Equal(t, c.field, fe.Field, err.Error())
			if c.name == "span past text" {
				require.ErrorContains(t, err, "past the end of the text (3 code points) of the note at a.text line 1")
			}
		})
	}
}

func TestPhysioNetConflictingSources(t *testing.T) {
	files := []File{
		{Name: "g.deid", Data: []byte("Patient 1 Note 1\n1 1 5\n")},
		{Name: "s.phi", Data: []byte("Patient 1 Note 1\n1 1 6\n")},
	}
	_, err := ReadPhysioNet(files, ReadOptions{})
	require.ErrorContains(t, err, "already come from g.deid line 1")
	files[1] = File{Name: "p.phrase", Data: []byte("1 1 1 6 Date 7/22\n")}
	_, err = ReadPhysioNet(files, ReadOptions{})
	require.ErrorContains(t, err, "spans differ from those g.deid lists")
}

// Two documents with the same patient and record order (numerically: "007"
// is 7) would be one note to the reader: the writer refuses them, naming both.
func TestWritePhysioNetSameNote(t *testing.T) {
	_, err := WritePhysioNet([]pipeline.Document{
		{ID: "a", Patient: "007", RecordOrder: 2, Text: "one"},
		{ID: "b", Patient: "7", RecordOrder: 1, Text: "two"},
		{ID: "c", Patient: "7", RecordOrder: 2, Text: "three"},
	})
	require.EqualError(t, err, "document c: patient 7 note 2, as document a is: PhysioNet files name a note by its patient and note number only, and could not tell the two apart")
}

func FuzzReadPhysioNet(f *testing.F) {
	f.Add("a.deid", []byte("Patient 1  Note 1\n48  48  55\n138  138  145\nPatient 1  Note 2\n"))
	f.Add("a.phi", []byte("Patient 163\tNote 5\n25\t25\t27\n28\t28\t30\n"))
	f.Add("a.phrase", []byte("1 1 48 55 Location CALVERT\n1 4 167 169 DateYear 92\n2 1 3 9 HCPName Dr. Li\n"))
	f.Add("a.text", []byte("START_OF_RECORD=1||||1||||\nSeen 7/22.\n||||END_OF_RECORD\nSTART_OF_RECORD=1||||2||||\nx||||END_OF_RECORD"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		ext := filepath.Ext(name)
		docs, err := ReadPhysioNet([]File{{Name: "f" + ext, Data: data}}, ReadOptions{AllowOverlap: true})
		if err != nil {
			return
		}
		// Whatever parses writes back and reads back to the same documents.
		files, err := WritePhysioNet(docs)
		if err != nil {
			return // e.g. a phrase whose type or text a phrase file cannot carry back
		}
		back, err := ReadPhysioNet(files, ReadOptions{AllowOverlap: true})
		require.NoError(t, err)
		require.Equal(t, len(docs), len(back))
		for i := range docs {
			require.Equal(t, docs[i].ID, back[i].ID)
			require.Equal(t, docs[i].Text, back[i].Text)
			require.Equal(t, len(docs[i].Spans), len(back[i].Spans))
			for j, s := range docs[i].Spans {
				require.Equal(t, [2]int{s.Start, s.End}, [2]int{back[i].Spans[j].Start, back[i].Spans[j].End})
			}
		}
	})
}
