package formats_test

import (
	"fmt"

	"deidcorpus/pipeline/formats"
)

// Read an i2b2 2014 file, then write the same documents as JSON lines:
// offsets are Unicode code points in every format.
func Example() {
	xml := `<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Seen by Dr. Renée Okafor on 2089-03-14.]]></TEXT>
<TAGS>
<NAME id="P0" start="12" end="24" text="Renée Okafor" TYPE="DOCTOR" comment="" />
<DATE id="P1" start="28" end="38" text="2089-03-14" TYPE="DATE" comment="" />
</TAGS>
</deIdi2b2>`
	docs, err := formats.ReadI2B2([]formats.File{{Name: "101-01.xml", Data: []byte(xml)}}, formats.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	d := docs[0]
	fmt.Printf("document %s of patient %s\n", d.ID, d.Patient)
	for _, s := range d.Spans {
		fmt.Printf("%d-%d %s/%s %q\n", s.Start, s.End, s.Category, s.Type, s.Text)
	}
	jsonl, err := formats.Lookup("jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := jsonl.Write(docs)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0].Name)
	// Output:
	// document 101-01 of patient 101
	// 12-24 NAME/DOCTOR "Renée Okafor"
	// 28-38 DATE/DATE "2089-03-14"
	// documents.jsonl
}

// A span whose offsets do not cover its text is an error that names the
// file, the line and the tag.
func ExampleReadI2B2_error() {
	xml := `<r><TEXT>abc</TEXT><TAGS><NAME id="P0" start="1" end="9" TYPE="DOCTOR"/></TAGS></r>`
	_, err := formats.ReadI2B2([]formats.File{{Name: "100-01.xml", Data: []byte(xml)}}, formats.ReadOptions{})
	fmt.Println(err)
	// Output:
	// 100-01.xml:1: tag P0 (NAME/DOCTOR): end 9 is past the end of the text (3 code points)
}
